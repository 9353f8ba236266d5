package schedulerd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

func ev(t *testing.T, typ events.Type, data any) events.Event {
	t.Helper()
	e, err := events.New(typ, "/test", "s", data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var key = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "my-app"}

func weighted(replicas int32, rev int64, weights map[string]int64) events.Binding {
	var list []policy.StaticClusterWeight
	var names []string
	for _, n := range []string{"cluster1", "cluster2", "cluster3"} {
		if w, ok := weights[n]; ok {
			list = append(list, policy.StaticClusterWeight{TargetCluster: policy.ClusterAffinity{ClusterNames: []string{n}}, Weight: w})
			names = append(names, n)
		}
	}
	spec := &policy.PropagationSpec{Placement: policy.Placement{
		ClusterAffinity: &policy.ClusterAffinity{ClusterNames: names},
		ReplicaScheduling: &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: "Divided", ReplicaDivisionPreference: "Weighted",
			WeightPreference: &policy.ClusterPreferences{StaticWeightList: list}}}}
	return events.Binding{Key: key, APIVersion: "apps/v1", Generation: rev, Revision: rev, Replicas: replicas, Spec: spec}
}

func placements(r *eventstest.Recorder) []events.PlacementDecision {
	var out []events.PlacementDecision
	for _, p := range r.OfType(events.TypePlacementDecided) {
		var d events.PlacementDecision
		_ = json.Unmarshal(p.Event.Data(), &d)
		out = append(out, d)
	}
	return out
}

func join(t *testing.T, h *Handler, name string, ready bool) {
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeClusterRegistered, events.ClusterRegistration{Name: name, Generation: 1})); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, ev(t, events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: name, Ready: ready, State: "Ready", ObservedAt: time.Now()})); err != nil {
		t.Fatal(err)
	}
}

func TestSeed000BindingIsPlacedThreeTwoOneAndNotRepublishedWhenNothingChanges(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
		join(t, h, c, true)
	}
	ctx := context.Background()
	b := weighted(6, 1, map[string]int64{"cluster1": 3, "cluster2": 2, "cluster3": 1})
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	ps := placements(rec)
	if len(ps) != 1 || !ps[0].Scheduled || len(ps[0].Clusters) != 3 || ps[0].Clusters[0].Replicas != 3 || ps[0].Clusters[1].Replicas != 2 || ps[0].Clusters[2].Replicas != 1 {
		t.Fatalf("placements %+v", ps)
	}
	// The same binding delivered again, and a capacity report, change nothing.
	_ = h.Handle(ctx, ev(t, events.TypeBindingChanged, b))
	_ = h.Handle(ctx, ev(t, events.TypeClusterCapacityReported, events.ClusterCapacity{Cluster: "cluster1", ObservedAt: time.Now(),
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}}))
	if n := len(placements(rec)); n != 1 {
		t.Fatalf("republished: %d placements", n)
	}
}

func TestClusterWithoutHealthReportIsNotPlacedUntilReady(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	ctx := context.Background()
	_ = h.Handle(ctx, ev(t, events.TypeClusterRegistered, events.ClusterRegistration{Name: "cluster1", Generation: 1}))
	_ = h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(2, 1, map[string]int64{"cluster1": 1})))
	ps := placements(rec)
	if len(ps) != 1 || ps[0].Scheduled || len(ps[0].Diagnosis["cluster1"]) == 0 {
		t.Fatalf("want an unschedulable decision with a reason, got %+v", ps)
	}
	// Health arrives: the unplaced binding is retried and placed.
	_ = h.Handle(ctx, ev(t, events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "cluster1", Ready: true, ObservedAt: time.Now()}))
	ps = placements(rec)
	if len(ps) != 2 || !ps[1].Scheduled || ps[1].Clusters[0].Replicas != 2 {
		t.Fatalf("after Ready: %+v", ps)
	}
}

func TestReconcileSchedulesBindingsACrashLeftWithoutPlacement(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	join(t, h, "cluster1", true)
	// As after a restart: the binding is known from the rebuild, its placement is not.
	h.book.bindings[key] = weighted(3, 4, map[string]int64{"cluster1": 1})
	if err := h.Reconcile(context.Background(), everyKey); err != nil {
		t.Fatal(err)
	}
	ps := placements(rec)
	if len(ps) != 1 || ps[0].BindingRevision != 4 {
		t.Fatalf("reconcile: %+v", ps)
	}
	if err := h.Reconcile(context.Background(), everyKey); err != nil || len(placements(rec)) != 1 {
		t.Fatalf("a second reconcile repeated a decision")
	}
}

func TestClusterAffinitiesResumeAtTheObservedTermUntilARescheduleRestartsThem(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	ctx := context.Background()
	join(t, h, "backup", true)
	_ = h.Handle(ctx, ev(t, events.TypeClusterRegistered, events.ClusterRegistration{Name: "primary", Generation: 1}))
	_ = h.Handle(ctx, ev(t, events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "primary", Ready: false, State: "NotReady", ObservedAt: time.Now(),
		Taints: []corev1.Taint{{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}}}))
	cm := events.ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "cfg"}
	b := events.Binding{Key: cm, APIVersion: "v1", Generation: 1, Revision: 1, Spec: &policy.PropagationSpec{Placement: policy.Placement{
		ClusterAffinities: []policy.ClusterAffinityTerm{
			{AffinityName: "main", ClusterAffinity: policy.ClusterAffinity{ClusterNames: []string{"primary"}}},
			{AffinityName: "dr", ClusterAffinity: policy.ClusterAffinity{ClusterNames: []string{"backup"}}},
		}}}}
	_ = h.Handle(ctx, ev(t, events.TypeBindingChanged, b))
	ps := placements(rec)
	if len(ps) != 1 || ps[0].AffinityName != "dr" || ps[0].Clusters[0].Name != "backup" {
		t.Fatalf("with primary NotReady: %+v", ps)
	}
	// primary recovers: the placement stays on the observed term (no automatic return).
	_ = h.Handle(ctx, ev(t, events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "primary", Ready: true, State: "Ready", ObservedAt: time.Now()}))
	if ps = placements(rec); len(ps) != 1 {
		t.Fatalf("moved back by itself: %+v", ps[len(ps)-1])
	}
	// An explicit reschedule restarts from the first term.
	now := time.Now().Add(time.Second)
	b.Revision, b.RescheduleRequestedAt = 2, &now
	_ = h.Handle(ctx, ev(t, events.TypeBindingChanged, b))
	ps = placements(rec)
	if last := ps[len(ps)-1]; last.AffinityName != "main" || last.Clusters[0].Name != "primary" {
		t.Fatalf("after reschedule: %+v", last)
	}
}

// A deregistration is a tombstone: a registration redelivered after it
// (older generation) does not bring the member back; the cluster applied
// again (a newer generation) does.
func TestAStaleRegistrationAfterADeregistrationDoesNotReviveTheMember(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, _ := newFailoverHandler(t, clk, "cluster1", "cluster2")
	ctx := context.Background()
	reg := func(gen int64) events.ClusterRegistration {
		return events.ClusterRegistration{Name: "cluster1", Generation: gen}
	}
	names := func() []string {
		var out []string
		for _, c := range h.members.clusters(h.reserved.reservedFor) {
			out = append(out, c.Name)
		}
		return out
	}
	if err := h.Handle(ctx, ev(t, events.TypeClusterDeregistered, reg(2))); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 1 || got[0] != "cluster2" {
		t.Fatalf("after the deregistration: %v", got)
	}
	if err := h.Handle(ctx, ev(t, events.TypeClusterRegistered, reg(1))); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 1 {
		t.Fatalf("a redelivered older registration revived the member: %v", got)
	}
	if err := h.Handle(ctx, ev(t, events.TypeClusterRegistered, reg(3))); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 2 {
		t.Fatalf("the cluster applied again must be back: %v", got)
	}
	// A deregistration older than the registration held changes nothing.
	if err := h.Handle(ctx, ev(t, events.TypeClusterDeregistered, reg(2))); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 2 {
		t.Fatalf("a stale deregistration removed the member: %v", got)
	}
}

// A placement that returns to an earlier one (A -> B -> A) is a new event
// with its own id: JetStream drops a repeated id as a duplicate, and the
// return to A used to be dropped that way (the members kept B). The same
// decision from the same cause keeps its id, so a redelivery is still
// dropped.
func TestAPlacementReturningToAnEarlierOneIsANewEvent(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2", "cluster3")
	ctx := context.Background()
	spec := &policy.PropagationSpec{Placement: policy.Placement{ClusterAffinity: &policy.ClusterAffinity{ClusterNames: []string{"cluster1", "cluster2", "cluster3"}}}}
	b := events.Binding{Key: events.ObjectKey{Kind: "Service", Namespace: "default", Name: "svc"}, APIVersion: "v1", Generation: 1, Revision: 1, Spec: spec}
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, ev(t, events.TypeClusterDeregistered, events.ClusterRegistration{Name: "cluster3", Generation: 2})); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, ev(t, events.TypeClusterRegistered, events.ClusterRegistration{Name: "cluster3", Generation: 3})); err != nil {
		t.Fatal(err)
	}
	health(t, h, clk, "cluster3", "Ready")
	ps := rec.OfType(events.TypePlacementDecided)
	var seq []string
	ids := map[string]bool{}
	for _, p := range ps {
		var d events.PlacementDecision
		_ = events.Decode(p.Event, &d)
		seq = append(seq, events.FormatTargets(d.Clusters))
		if ids[p.Event.ID()] {
			t.Fatalf("placement %s repeats an earlier id: JetStream would drop it (sequence %v)", events.FormatTargets(d.Clusters), seq)
		}
		ids[p.Event.ID()] = true
	}
	if len(seq) != 3 || seq[0] != seq[2] || seq[0] == seq[1] {
		t.Fatalf("want A -> B -> A, got %v", seq)
	}
	// The same decision from the same cause: the same id.
	e := ev(t, events.TypeBindingChanged, b)
	a1 := placementID(b.Key, 1, events.PlacementDecision{Scheduled: true}, events.PlacementDecision{}, false, e)
	a2 := placementID(b.Key, 1, events.PlacementDecision{Scheduled: true}, events.PlacementDecision{}, false, e)
	if a1 != a2 {
		t.Fatal("a redelivered cause must give the same placement id")
	}
}

// TestAHealthSnapshotWhoseRescheduleFailedReschedulesOnRedelivery: a
// snapshot that makes a cluster Ready reschedules a Duplicated template
// onto it; when that
// placement's publish fails, the redelivered snapshot must do it. The
// health was kept from the failed delivery, so the redelivery found
// nothing changed and answered: the template waited for the next change.
func TestAHealthSnapshotWhoseRescheduleFailedReschedulesOnRedelivery(t *testing.T) {
	pub := &flaky{failed: true} // armed below
	h := NewHandler(pub, "t", core.New(plugins.DefaultProfile()), nil)
	ctx := context.Background()
	join(t, h, "cluster1", true)
	join(t, h, "cluster2", false)
	notReady := events.ClusterHealth{Cluster: "cluster2", State: "NotReady", ObservedAt: time.Now(),
		Taints: []corev1.Taint{{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}}}
	if err := h.Handle(ctx, ev(t, events.TypeClusterHealthChanged, notReady)); err != nil {
		t.Fatal(err)
	}
	// Duplicated: a cluster becoming Ready reschedules it (reference §1.1).
	b := weighted(4, 1, map[string]int64{"cluster1": 1, "cluster2": 1})
	b.Spec.Placement.ReplicaScheduling = &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: "Duplicated"}
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	if ps := placements(&pub.Recorder); len(ps) != 1 || placedOn(ps[0]) != "cluster1:4" {
		t.Fatalf("with cluster2 not ready: %+v", ps)
	}
	at := time.Now().Add(time.Second)
	snap := ev(t, events.TypeClusterHealthSnapshot, events.HealthSnapshot{TakenAt: at, Clusters: []events.ClusterHealth{
		{Cluster: "cluster1", Ready: true, State: "Ready", ObservedAt: at}, {Cluster: "cluster2", Ready: true, State: "Ready", ObservedAt: at}}})
	pub.failed = false
	if err := h.Handle(ctx, snap); err == nil {
		t.Fatal("first delivery: the placement's publish failed, want an error")
	}
	if err := h.Handle(ctx, snap); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	ps := placements(&pub.Recorder)
	if got := placedOn(ps[len(ps)-1]); got != "cluster1:4 cluster2:4" {
		t.Errorf("after the redelivery the last placement is %s, want cluster1:4 cluster2:4", got)
	}
}

func placedOn(p events.PlacementDecision) string {
	var out []string
	for _, c := range p.Clusters {
		out = append(out, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
	}
	return strings.Join(out, " ")
}

// healthd publishes a member's health when it changes, so a cluster
// unjoined and joined again gets no new report: it is as healthy as its
// last report says, as for a rebuilt schedulerd, and is placed at once.
// Forgetting the report with the registration left it tainted not-ready
// until its health next changed (up to healthd's 30 s snapshot).
func TestAClusterJoinedAgainKeepsItsLastHealthReport(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	ctx := context.Background()
	join(t, h, "cluster1", true)
	if err := h.Handle(ctx, ev(t, events.TypeClusterDeregistered, events.ClusterRegistration{Name: "cluster1", Generation: 1})); err != nil {
		t.Fatal(err)
	}
	if n := len(h.members.clusters(h.reserved.reservedFor)); n != 0 {
		t.Fatalf("a deregistered member is still a candidate: %d", n)
	}
	if err := h.Handle(ctx, ev(t, events.TypeClusterRegistered, events.ClusterRegistration{Name: "cluster1", Generation: 2})); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(2, 1, map[string]int64{"cluster1": 1}))); err != nil {
		t.Fatal(err)
	}
	if ps := placements(rec); len(ps) != 1 || !ps[0].Scheduled || ps[0].Clusters[0].Replicas != 2 {
		t.Fatalf("want placed on the re-joined cluster1 at once, got %+v", ps)
	}
}
