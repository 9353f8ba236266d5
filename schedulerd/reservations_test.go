package schedulerd

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

func capacityOf(t *testing.T, h *Handler, cluster, cpuAllocated string, at time.Time) {
	t.Helper()
	c := events.ClusterCapacity{Cluster: cluster, Nodes: 1, ReadyNodes: 1,
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourcePods: resource.MustParse("110")},
		Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuAllocated)}, ObservedAt: at}
	if err := h.Handle(context.Background(), ev(t, events.TypeClusterCapacityReported, c)); err != nil {
		t.Fatal(err)
	}
}

func dynamicBinding(name string, replicas int32, rev int64) events.Binding {
	spec := &policy.PropagationSpec{Placement: policy.Placement{
		ClusterAffinity: &policy.ClusterAffinity{ClusterNames: []string{"cluster1", "cluster2"}},
		ReplicaScheduling: &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: "Divided", ReplicaDivisionPreference: "Weighted",
			WeightPreference: &policy.ClusterPreferences{DynamicWeight: "AvailableReplicas"}}}}
	return events.Binding{Key: events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: name}, APIVersion: "apps/v1",
		Generation: rev, Revision: rev, Replicas: replicas, Spec: spec,
		ReplicaRequirements: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
}

func TestPlacedReplicasCountAgainstACapacityTheMemberHasNotReportedYet(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2")
	capacityOf(t, h, "cluster1", "0", clk.t)
	capacityOf(t, h, "cluster2", "0", clk.t)
	ctx := context.Background()
	latest := func(name string) events.PlacementDecision {
		var out events.PlacementDecision
		for _, p := range placements(rec) {
			if p.Key.Name == name {
				out = p
			}
		}
		return out
	}
	// Each cluster has room for 10 replicas of 100m: 20 in all.
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, dynamicBinding("a", 15, 1))); err != nil {
		t.Fatal(err)
	}
	a := latest("a")
	if !a.Scheduled {
		t.Fatalf("a (15 of 20 free) must be placed: %+v", a)
	}
	// Before the members report a's replicas, b must not get the same capacity.
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, dynamicBinding("b", 15, 1))); err != nil {
		t.Fatal(err)
	}
	if b := latest("b"); b.Scheduled {
		t.Fatalf("b (15) must not fit in the 5 replicas a left: placed %s", targetsOf(b))
	}
	// executord reports a running; the members' next capacity reports include it.
	clk.advance(5 * time.Second)
	for _, c := range a.Clusters {
		st := events.WorkStatus{Key: a.Key, Cluster: c.Name, Generation: 1, Replicas: c.Replicas, AvailableReplicas: c.Replicas, ReadyReplicas: c.Replicas, Health: events.WorkHealthy, UpdatedAt: clk.t}
		if err := h.Handle(ctx, ev(t, events.TypeWorkStatusChanged, st)); err != nil {
			t.Fatal(err)
		}
	}
	clk.advance(5 * time.Second)
	for _, c := range a.Clusters {
		capacityOf(t, h, c.Name, resource.NewMilliQuantity(int64(c.Replicas)*100, resource.DecimalSI).String(), clk.t)
	}
	if n := h.reserved.count("cluster1") + h.reserved.count("cluster2"); n != 0 {
		t.Fatalf("the reports cover a's replicas: its reservations must be released, %d left", n)
	}
	// Still no room for b: the capacity is now counted as allocated, not twice.
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, dynamicBinding("b", 5, 2))); err != nil {
		t.Fatal(err)
	}
	if b := latest("b"); !b.Scheduled {
		t.Fatalf("b scaled to the 5 free replicas must be placed once: %+v", b)
	}
}

func TestAReservationExpiresWhenItsReplicasNeverStart(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, _ := newFailoverHandler(t, clk, "cluster1", "cluster2")
	capacityOf(t, h, "cluster1", "0", clk.t)
	capacityOf(t, h, "cluster2", "0", clk.t)
	if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, dynamicBinding("a", 15, 1))); err != nil {
		t.Fatal(err)
	}
	if h.reserved.count("cluster1")+h.reserved.count("cluster2") == 0 {
		t.Fatal("placing a must reserve its replicas")
	}
	clk.advance(ReservationTTL - time.Second)
	capacityOf(t, h, "cluster1", "0", clk.t)
	if h.reserved.count("cluster1") == 0 {
		t.Fatal("a report before the replicas run must not release the reservation")
	}
	clk.advance(2 * time.Second)
	capacityOf(t, h, "cluster1", "0", clk.t)
	if h.reserved.count("cluster1")+h.reserved.count("cluster2") != 0 {
		t.Fatal("a reservation older than ReservationTTL must be released")
	}
}

func TestAScaleUpStaysReservedUntilTheWholeShareRuns(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, _ := newFailoverHandler(t, clk, "cluster1", "cluster2")
	capacityOf(t, h, "cluster1", "0", clk.t)
	capacityOf(t, h, "cluster2", "0", clk.t)
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, dynamicBinding("a", 4, 1))); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, dynamicBinding("a", 10, 2))); err != nil {
		t.Fatal(err)
	}
	share := map[string]int32{}
	for _, c := range h.book.placements[dynamicBinding("a", 10, 2).Key].Clusters {
		share[c.Name] = c.Replicas
	}
	// cluster1 still reports only its old 2 replicas available.
	clk.advance(time.Second)
	st := events.WorkStatus{Key: dynamicBinding("a", 10, 2).Key, Cluster: "cluster1", Generation: 2, Replicas: share["cluster1"], AvailableReplicas: 2, UpdatedAt: clk.t}
	if err := h.Handle(ctx, ev(t, events.TypeWorkStatusChanged, st)); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	capacityOf(t, h, "cluster1", "200m", clk.t)
	if h.reserved.count("cluster1") == 0 {
		t.Fatalf("a report of the old replicas must not release the scale-up's reservation (share %d)", share["cluster1"])
	}
}

// The running total a cluster keeps must equal what the reservations made
// so far add up to, after any sequence of increases, decreases and
// removals: checked against a model of its own (cluster -> template ->
// replicas) and each template's requests as Quantities.
func TestAClustersReservedTotalIsAlwaysTheSumOfItsReservations(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, _ := newFailoverHandler(t, clk, "cluster1", "cluster2")
	per := []corev1.ResourceList{
		{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		{corev1.ResourceCPU: resource.MustParse("1500m"), "nvidia.com/gpu": resource.MustParse("1")},
	}
	model := map[string]map[events.ObjectKey]int32{"cluster1": {}, "cluster2": {}}
	perOf := func(k events.ObjectKey) corev1.ResourceList { return per[int(k.Name[0])%2] }
	rng := uint64(42)
	next := func(n int) int { rng = rng*6364136223846793005 + 1442695040888963407; return int(rng>>33) % n }
	peak := 0
	for step := range 3000 {
		k := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: string(rune('a' + next(20)))}
		cluster := []string{"cluster1", "cluster2"}[next(2)]
		if next(10) == 0 {
			h.reserved.drop(k)
			delete(model["cluster1"], k)
			delete(model["cluster2"], k)
		} else {
			delta := int32(next(9) - 4)
			clk.t = clk.t.Add(time.Second)
			h.reserved.adjust(cluster, k, delta, perOf(k), clk.t)
			if n, ok := model[cluster][k]; ok || delta > 0 {
				if n += delta; n > 0 {
					model[cluster][k] = n
				} else {
					delete(model[cluster], k)
				}
			}
		}
		for _, c := range []string{"cluster1", "cluster2"} {
			want := corev1.ResourceList{}
			for key, n := range model[c] {
				for name, q := range perOf(key) {
					add := q.DeepCopy()
					add.Mul(int64(n))
					cur := want[name]
					cur.Add(add)
					want[name] = cur
				}
				pods := want[corev1.ResourcePods]
				pods.Add(*resource.NewQuantity(int64(n), resource.DecimalSI))
				want[corev1.ResourcePods] = pods
			}
			peak = max(peak, len(model[c]))
			if got := h.reserved.count(c); got != len(model[c]) {
				t.Fatalf("step %d: %s has %d reservations, the model %d", step, c, got, len(model[c]))
			}
			got := h.reserved.reservedFor(c, nil)
			for name, q := range want {
				if g := got[name]; g.Cmp(q) != 0 {
					t.Fatalf("step %d: %s reserved %s = %s, the reservations sum to %s", step, c, name, g.String(), q.String())
				}
			}
			for name, g := range got {
				if _, ok := want[name]; !ok && !g.IsZero() {
					t.Fatalf("step %d: %s reserved %s = %s with no reservation asking for it", step, c, name, g.String())
				}
			}
		}
	}
	if peak < 5 {
		t.Fatalf("the sequence never held more than %d reservations in a cluster: it tests too little", peak)
	}
}

// Bindings of one policy with equal specs share one decoded spec; a changed
// spec is its own and becomes the one later bindings share.
func TestBindingsOfOnePolicyShareTheirSpec(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, _ := newFailoverHandler(t, clk, "cluster1", "cluster2")
	ctx := context.Background()
	ref := &events.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "p"}
	send := func(name string, rev int64, weight bool) events.Binding {
		b := dynamicBinding(name, 2, rev)
		b.Policy = ref
		if weight {
			b.Spec.Placement.ReplicaScheduling.WeightPreference = &policy.ClusterPreferences{StaticWeightList: []policy.StaticClusterWeight{{TargetCluster: policy.ClusterAffinity{ClusterNames: []string{"cluster1"}}, Weight: 1}}}
		}
		if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
			t.Fatal(err)
		}
		return h.book.bindings[b.Key]
	}
	a, b := send("a", 1, false), send("b", 1, false)
	if a.Spec != b.Spec {
		t.Fatal("equal specs of one policy must be shared")
	}
	c := send("c", 1, true)
	if c.Spec == a.Spec || c.Spec.Placement.ReplicaScheduling.WeightPreference.StaticWeightList == nil {
		t.Fatalf("a changed spec must be the binding's own: %+v", c.Spec.Placement.ReplicaScheduling)
	}
	if d := send("d", 1, true); d.Spec != c.Spec {
		t.Fatal("the changed spec must be the one shared from then on")
	}
	if a2 := h.book.bindings[a.Key]; a2.Spec.Placement.ReplicaScheduling.WeightPreference.StaticWeightList != nil {
		t.Fatal("an earlier binding must keep the spec it was decided with")
	}
}

// Deciding on a snapshot updated in place of the clusters whose
// reservations changed gives the very placements that rebuilding the
// snapshot before every decision gives.
func TestIncrementalCapacityUpdatesPlaceAsAFullRebuild(t *testing.T) {
	run := func(rebuild bool) []string {
		clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
		h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2")
		capacityOf(t, h, "cluster1", "200m", clk.t)
		capacityOf(t, h, "cluster2", "0", clk.t)
		ctx := context.Background()
		for i := range 12 {
			if rebuild {
				h.members.snap = nil
			}
			b := dynamicBinding(string(rune('a'+i)), int32(1+i%4), 1)
			if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
				t.Fatal(err)
			}
			if i == 5 { // a removal releases capacity in the middle
				if rebuild {
					h.members.snap = nil
				}
				if err := h.Handle(ctx, ev(t, events.TypeBindingRemoved, dynamicBinding("b", 2, 2))); err != nil {
					t.Fatal(err)
				}
			}
		}
		var out []string
		for _, p := range placements(rec) {
			out = append(out, p.Key.Name+":"+events.FormatTargets(p.Clusters)+":"+p.Error)
		}
		return out
	}
	inc, full := run(false), run(true)
	if len(inc) < 10 || strings.Join(inc, "\n") != strings.Join(full, "\n") {
		t.Fatalf("incremental:\n%s\nfull rebuild:\n%s", strings.Join(inc, "\n"), strings.Join(full, "\n"))
	}
}
