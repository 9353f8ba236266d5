package schedulerd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/internal/clock"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/failover"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

// testClock is a settable time for the handler.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time          { return c.t }
func (c *testClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func i32p(n int32) *int32                    { return &n }
func lastPlacement(r *eventstest.Recorder) events.PlacementDecision {
	ps := placements(r)
	if len(ps) == 0 {
		return events.PlacementDecision{}
	}
	return ps[len(ps)-1]
}

func targetsOf(p events.PlacementDecision) string { return events.FormatTargets(p.Clusters) }

func failoverRecords(r *eventstest.Recorder, t events.Type) []events.FailoverRecord {
	var out []events.FailoverRecord
	for _, m := range r.OfType(t) {
		var fr events.FailoverRecord
		_ = json.Unmarshal(m.Event.Data(), &fr)
		out = append(out, fr)
	}
	return out
}

func newFailoverHandler(t *testing.T, clk *testClock, clusters ...string) (*Handler, *eventstest.Recorder) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	h.clock = clock.Func(clk.now)
	for _, c := range clusters {
		// Registered and Ready at the handler's clock (join stamps the real
		// time, which a later report on this clock would look older than).
		if err := h.Handle(context.Background(), ev(t, events.TypeClusterRegistered, events.ClusterRegistration{Name: c, Generation: 1})); err != nil {
			t.Fatal(err)
		}
		health(t, h, clk, c, "Ready")
	}
	return h, rec
}

func health(t *testing.T, h *Handler, clk *testClock, cluster, state string, taints ...corev1.Taint) {
	t.Helper()
	c := events.ClusterHealth{Cluster: cluster, Ready: state == "Ready", State: state, Taints: taints, Since: clk.t, ObservedAt: clk.t}
	if state != "Ready" {
		since := clk.t
		c.FailingSince = &since
	}
	if err := h.Handle(context.Background(), ev(t, events.TypeClusterHealthChanged, c)); err != nil {
		t.Fatal(err)
	}
}

func workHealthy(t *testing.T, h *Handler, clk *testClock, cluster string, gen int64, replicas int32) {
	t.Helper()
	st := events.WorkStatus{Key: key, Cluster: cluster, Generation: gen, Replicas: replicas, AvailableReplicas: replicas, Health: events.WorkHealthy, Phase: events.WorkRunning, UpdatedAt: clk.t}
	if err := h.Handle(context.Background(), ev(t, events.TypeWorkStatusChanged, st)); err != nil {
		t.Fatal(err)
	}
}

// reschedule is flotilla reschedule of b a second from now: its next
// revision, asking for a fresh decision, handed over a second later.
func reschedule(t *testing.T, h *Handler, clk *testClock, b events.Binding) events.Binding {
	t.Helper()
	clk.advance(time.Second)
	b.Revision++
	at := clk.t
	b.RescheduleRequestedAt = &at
	clk.advance(time.Second)
	if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	return b
}

func tick(t *testing.T, h *Handler) {
	t.Helper()
	if err := h.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSeed000FailoverMovesTwoTwoTwoToThreeThreeAndNothingMovesBackUntilARescheduleAsks(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2", "cluster3")
	b := weighted(6, 1, map[string]int64{"cluster1": 1, "cluster2": 1, "cluster3": 1})
	b.Spec.Failover = &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{
		DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32p(60)}, PurgeMode: "Graciously", GracePeriodSeconds: i32p(600)}}
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	if got := targetsOf(lastPlacement(rec)); got != "cluster1=2,cluster2=2,cluster3=2" {
		t.Fatalf("first placement %s", got)
	}

	health(t, h, clk, "cluster1", "Unreachable", corev1.Taint{Key: policy.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule})
	clk.advance(59 * time.Second)
	tick(t, h)
	if got := targetsOf(lastPlacement(rec)); got != "cluster1=2,cluster2=2,cluster3=2" {
		t.Fatalf("59s after cluster1 became Unreachable the workload must still be 2/2/2, got %s", got)
	}

	clk.advance(time.Second)
	tick(t, h)
	p := lastPlacement(rec)
	if got := targetsOf(p); got != "cluster2=3,cluster3=3" {
		t.Fatalf("60s after cluster1 became Unreachable the workload must run 3/3 on cluster2 and cluster3, got %s", got)
	}
	if len(p.Evictions) != 1 || p.Evictions[0].Cluster != "cluster1" || !p.Evictions[0].Kept() || p.Evictions[0].PurgeMode != events.PurgeGracefully || p.Evictions[0].Replicas != 2 {
		t.Fatalf("the placement must carry cluster1's graceful eviction, kept: %+v", p.Evictions)
	}
	ev1 := failoverRecords(rec, events.TypeFailoverEvicted)
	if len(ev1) != 1 || events.FormatTargets(ev1[0].From) != "cluster1=2,cluster2=2,cluster3=2" || events.FormatTargets(ev1[0].To) != "cluster2=3,cluster3=3" || ev1[0].Eviction.Reason != events.EvictApplicationFailure {
		t.Fatalf("the eviction must be recorded with from and to: %+v", ev1)
	}

	// The replacement becomes healthy: the old copy is released.
	workHealthy(t, h, clk, "cluster2", 1, 3)
	if len(failoverRecords(rec, events.TypeFailoverPurged)) != 0 {
		t.Fatal("purged before every new cluster was healthy")
	}
	workHealthy(t, h, clk, "cluster3", 1, 3)
	p = lastPlacement(rec)
	if len(p.Evictions) != 1 || p.Evictions[0].Kept() || p.Evictions[0].PurgeReason != "replacement healthy" {
		t.Fatalf("the eviction must be purged once the replacement is healthy: %+v", p.Evictions)
	}
	if n := len(failoverRecords(rec, events.TypeFailoverPurged)); n != 1 {
		t.Fatalf("want one purge record, got %d", n)
	}

	// cluster1 recovers: nothing moves back by itself.
	before := len(placements(rec))
	clk.advance(time.Minute)
	health(t, h, clk, "cluster1", "Ready")
	tick(t, h)
	if got := targetsOf(lastPlacement(rec)); got != "cluster2=3,cluster3=3" || len(placements(rec)) != before {
		t.Fatalf("a recovered cluster must not pull replicas back: %s (%d new placements)", got, len(placements(rec))-before)
	}

	// An explicit reschedule moves work back and forgets the purged eviction.
	reschedule(t, h, clk, b)
	p = lastPlacement(rec)
	if got := targetsOf(p); got != "cluster1=2,cluster2=2,cluster3=2" || len(p.Evictions) != 0 {
		t.Fatalf("flotilla reschedule must move work back to 2/2/2 and clear the eviction: %s %+v", got, p.Evictions)
	}
}

func TestAnUntoleratedNoExecuteTaintEvictsAWorkloadWithoutFailoverSettings(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2", "cluster3")
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(6, 1, map[string]int64{"cluster1": 1, "cluster2": 1, "cluster3": 1}))); err != nil {
		t.Fatal(err)
	}
	health(t, h, clk, "cluster1", "NotReady", corev1.Taint{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule})
	if got := targetsOf(lastPlacement(rec)); got != "cluster1=2,cluster2=2,cluster3=2" {
		t.Fatalf("a NoSchedule taint alone must not move placed work, got %s", got)
	}
	clk.advance(300 * time.Second)
	added := metav1.NewTime(clk.t)
	health(t, h, clk, "cluster1", "NotReady",
		corev1.Taint{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule},
		corev1.Taint{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added})
	p := lastPlacement(rec)
	if got := targetsOf(p); got != "cluster2=3,cluster3=3" || len(p.Evictions) != 1 || p.Evictions[0].Reason != events.EvictTaintUntolerated {
		t.Fatalf("the NoExecute taint must evict cluster1 at once: %s %+v", got, p.Evictions)
	}
}

func TestAClusterDownStormEndsWithEveryWorkloadPlacedOrAClearReason(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	var clusters []string
	for i := 0; i < 20; i++ {
		clusters = append(clusters, fmt.Sprintf("member%02d", i))
	}
	h, rec := newFailoverHandler(t, clk, clusters...)
	h.SetEvictionLimit(EvictionLimit{PerSecond: 20, Burst: 40})
	ctx := context.Background()
	fo := &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{
		DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32p(30)}, PurgeMode: "Gracefully", GracePeriodSeconds: i32p(60)}}
	const n = 100
	keys := make([]events.ObjectKey, n)
	for i := 0; i < n; i++ {
		k := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: fmt.Sprintf("app-%03d", i)}
		keys[i] = k
		spec := &policy.PropagationSpec{Failover: fo, Placement: policy.Placement{
			ReplicaScheduling: &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: "Divided", ReplicaDivisionPreference: "Weighted"}}}
		if i == 0 {
			// Only on clusters that go down: it cannot be placed anywhere.
			spec.Placement.ClusterAffinity = &policy.ClusterAffinity{ClusterNames: clusters[:2]}
		}
		b := events.Binding{Key: k, APIVersion: "apps/v1", Generation: 1, Revision: 1, Replicas: 20, Spec: spec}
		if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
			t.Fatal(err)
		}
	}
	// Half the clusters go down at once.
	for _, c := range clusters[:10] {
		health(t, h, clk, c, "Unreachable", corev1.Taint{Key: policy.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule})
	}
	evictionsBefore := len(failoverRecords(rec, events.TypeFailoverEvicted))
	if evictionsBefore != 0 {
		t.Fatalf("nothing may move before the toleration runs out, %d moved", evictionsBefore)
	}
	clk.advance(30 * time.Second)
	tick(t, h)
	first := len(failoverRecords(rec, events.TypeFailoverEvicted))
	if first == 0 || first > 40 {
		t.Fatalf("the first tick after the toleration may evict at most the burst of 40, evicted %d", first)
	}
	for i := 0; i < 600; i++ {
		clk.advance(time.Second)
		tick(t, h)
	}
	down := map[string]bool{}
	for _, c := range clusters[:10] {
		down[c] = true
	}
	latest := map[events.ObjectKey]events.PlacementDecision{}
	for _, p := range placements(rec) {
		latest[p.Key] = p
	}
	for i, k := range keys {
		p := latest[k]
		if i == 0 {
			if p.Scheduled || !strings.Contains(p.Error, "member00") || !strings.Contains(p.Error, "member01") {
				t.Fatalf("the workload confined to lost clusters must be unschedulable with a reason naming each: %+v", p)
			}
			continue
		}
		var sum int32
		for _, c := range p.Clusters {
			if down[c.Name] {
				t.Fatalf("%s still placed on lost cluster %s: %s", k.Name, c.Name, targetsOf(p))
			}
			sum += c.Replicas
		}
		if !p.Scheduled || sum != 20 {
			t.Fatalf("%s must run all 20 replicas on the remaining clusters: %s (%s)", k.Name, targetsOf(p), p.Error)
		}
	}
	if testutil.ToFloat64(h.metrics.evictionsDeferred) == 0 {
		t.Fatal("the rate limit must have deferred some of the 990 evictions")
	}
}

func TestARescheduleEndsAPurgeModeNeverEviction(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2", "cluster3")
	b := weighted(6, 1, map[string]int64{"cluster1": 1, "cluster2": 1, "cluster3": 1})
	b.Spec.Failover = &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{
		DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32p(0)}, PurgeMode: "Never"}}
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	health(t, h, clk, "cluster1", "NotReady")
	clk.advance(time.Second)
	tick(t, h)
	p := lastPlacement(rec)
	if len(p.Evictions) != 1 || !p.Evictions[0].Kept() || p.Evictions[0].PurgeMode != events.PurgeNever {
		t.Fatalf("want cluster1 evicted with its copy kept (Never): %+v", p.Evictions)
	}
	clk.advance(24 * time.Hour)
	tick(t, h)
	if p := lastPlacement(rec); len(p.Evictions) != 1 || !p.Evictions[0].Kept() {
		t.Fatalf("Never keeps the copy for ever: %+v", p.Evictions)
	}
	health(t, h, clk, "cluster1", "Ready")
	reschedule(t, h, clk, b)
	if p := lastPlacement(rec); len(p.Evictions) != 0 || targetsOf(p) != "cluster1=2,cluster2=2,cluster3=2" {
		t.Fatalf("flotilla reschedule must end the Never eviction and place 2/2/2 again: %s %+v", targetsOf(p), p.Evictions)
	}
}

func TestFailoverLooksAgainWhenThePolicyOrTheClusterObjectChanges(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	ctx := context.Background()
	t.Run("a policy edit that drops the toleration of a NoExecute taint evicts on the next tick", func(t *testing.T) {
		h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2", "cluster3")
		b := weighted(6, 1, map[string]int64{"cluster1": 1, "cluster2": 1, "cluster3": 1})
		b.Spec.Placement.ClusterTolerations = []corev1.Toleration{{Key: policy.TaintClusterNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
		if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
			t.Fatal(err)
		}
		added := metav1.NewTime(clk.t)
		health(t, h, clk, "cluster1", "NotReady", corev1.Taint{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added})
		tick(t, h)
		if got := targetsOf(lastPlacement(rec)); got != "cluster1=2,cluster2=2,cluster3=2" {
			t.Fatalf("a tolerated taint keeps the workload: %s", got)
		}
		b2 := b
		b2.Revision = 2
		b2.Spec = &policy.PropagationSpec{Placement: b.Spec.Placement}
		b2.Spec.Placement.ClusterTolerations = nil
		if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b2)); err != nil {
			t.Fatal(err)
		}
		clk.advance(time.Second)
		tick(t, h)
		if got := targetsOf(lastPlacement(rec)); got != "cluster2=3,cluster3=3" {
			t.Fatalf("without the toleration cluster1 must be left: %s", got)
		}
	})
	t.Run("a NoExecute taint in the Cluster object's spec evicts", func(t *testing.T) {
		h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2", "cluster3")
		if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(6, 1, map[string]int64{"cluster1": 1, "cluster2": 1, "cluster3": 1}))); err != nil {
			t.Fatal(err)
		}
		reg := events.ClusterRegistration{Name: "cluster1", Generation: 2}
		reg.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoExecute}}
		if err := h.Handle(ctx, ev(t, events.TypeClusterRegistered, reg)); err != nil {
			t.Fatal(err)
		}
		if got := targetsOf(lastPlacement(rec)); got != "cluster2=3,cluster3=3" {
			t.Fatalf("the maintenance taint must evict cluster1: %s", got)
		}
	})
}

func TestAWorkloadUnhealthyEverywhereIsEvictedOnceAndStaysUnschedulable(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2")
	b := weighted(4, 1, map[string]int64{"cluster1": 1, "cluster2": 1})
	b.Spec.Failover = &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{
		DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32p(0)}, PurgeMode: "Directly"}}
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cluster1", "cluster2"} {
		since := clk.t
		st := events.WorkStatus{Key: key, Cluster: c, Generation: 1, Replicas: 2, Health: events.WorkUnhealthy, UnhealthySince: &since, UpdatedAt: clk.t}
		if err := h.Handle(ctx, ev(t, events.TypeWorkStatusChanged, st)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		clk.advance(500 * time.Millisecond)
		tick(t, h)
	}
	if n := len(failoverRecords(rec, events.TypeFailoverEvicted)); n != 2 {
		t.Fatalf("each cluster is evicted once, got %d evictions (flapping)", n)
	}
	if p := lastPlacement(rec); p.Scheduled || len(p.Clusters) != 0 {
		t.Fatalf("with both clusters evicted the workload is unschedulable until a reschedule: %s", targetsOf(p))
	}
}

func TestPreservedStateReachesTheEvictionThroughTheHandler(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2", "cluster3")
	b := weighted(6, 1, map[string]int64{"cluster1": 1, "cluster2": 1, "cluster3": 1})
	b.Spec.Failover = &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{
		DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32p(10)},
		StatePreservation:  &policy.StatePreservation{Rules: []policy.StatePreservationRule{{AliasLabelName: "example.io/rev", JSONPath: "{.updateRevision}"}}}}}
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	st := events.WorkStatus{Key: key, Cluster: "cluster1", Generation: 1, Replicas: 2, AvailableReplicas: 2, Health: events.WorkHealthy,
		PreservedState: map[string]string{"example.io/rev": "web-42"}, UpdatedAt: clk.t}
	if err := h.Handle(ctx, ev(t, events.TypeWorkStatusChanged, st)); err != nil {
		t.Fatal(err)
	}
	health(t, h, clk, "cluster1", "Unreachable")
	clk.advance(10 * time.Second)
	tick(t, h)
	p := lastPlacement(rec)
	if len(p.Evictions) != 1 || p.Evictions[0].PreservedLabels["example.io/rev"] != "web-42" {
		t.Fatalf("the eviction must carry cluster1's preserved state: %+v", p.Evictions)
	}
}

func TestACopyNoClusterCanReplaceOutlivesItsGracePeriodUntilARescheduleOrTheTemplatesDeletion(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2")
	// Only cluster1 may run it: when cluster1 is lost, nowhere else can.
	b := weighted(2, 1, map[string]int64{"cluster1": 1})
	b.Spec.Failover = &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{
		DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32p(5)}, PurgeMode: "Gracefully", GracePeriodSeconds: i32p(30)}}
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	workHealthy(t, h, clk, "cluster1", 1, 2)
	health(t, h, clk, "cluster1", "Unreachable", corev1.Taint{Key: policy.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule})
	clk.advance(5 * time.Second)
	tick(t, h)
	p := lastPlacement(rec)
	if p.Scheduled || len(p.Clusters) != 0 || len(p.Evictions) != 1 || !p.Evictions[0].Kept() || p.Evictions[0].Held != "" {
		t.Fatalf("want cluster1 evicted, nowhere to go, its copy kept within the grace period: %s %+v", targetsOf(p), p.Evictions)
	}

	for i := 0; i < 40; i++ { // 40 s: past the 30 s grace period
		clk.advance(time.Second)
		tick(t, h)
	}
	p = lastPlacement(rec)
	if len(p.Evictions) != 1 || !p.Evictions[0].Kept() || p.Evictions[0].Held != failover.HeldNotPlaced {
		t.Fatalf("past its grace period the only copy must be held, not purged: %+v", p.Evictions)
	}
	if got := failoverRecords(rec, events.TypeFailoverPurged); len(got) != 0 {
		t.Fatalf("no purge may be recorded for the only copy: %+v", got)
	}
	before := len(placements(rec))
	clk.advance(time.Hour)
	tick(t, h)
	if n := len(placements(rec)) - before; n != 0 {
		t.Fatalf("a held copy is reported once, not on every tick: %d new placements", n)
	}

	// cluster1 is back and the user reschedules: the held eviction is
	// forgotten and the template returns to cluster1, its copy untouched.
	health(t, h, clk, "cluster1", "Ready")
	b2 := reschedule(t, h, clk, b)
	if p := lastPlacement(rec); targetsOf(p) != "cluster1=2" || len(p.Evictions) != 0 {
		t.Fatalf("flotilla reschedule must end the hold and place cluster1=2 again: %s %+v", targetsOf(p), p.Evictions)
	}
	if got := failoverRecords(rec, events.TypeFailoverPurged); len(got) != 0 {
		t.Fatalf("the copy was never released: %+v", got)
	}

	// Deleting the template withdraws its placement: every copy goes.
	if err := h.Handle(ctx, ev(t, events.TypeBindingRemoved, b2)); err != nil {
		t.Fatal(err)
	}
	if removed := rec.OfType(events.TypePlacementRemoved); len(removed) != 1 {
		t.Fatalf("want the placement withdrawn once, got %d removals", len(removed))
	}
}

func TestAHeldCopyIsReleasedWhenAReplacementBecomesHealthy(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2")
	b := weighted(4, 1, map[string]int64{"cluster1": 1, "cluster2": 1})
	b.Spec.Failover = &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{
		DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32p(5)}, PurgeMode: "Gracefully", GracePeriodSeconds: i32p(30)}}
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, b)); err != nil {
		t.Fatal(err)
	}
	health(t, h, clk, "cluster1", "Unreachable")
	clk.advance(5 * time.Second)
	tick(t, h)
	if got := targetsOf(lastPlacement(rec)); got != "cluster2=4" {
		t.Fatalf("want cluster2 to take the 4 replicas, got %s", got)
	}
	clk.advance(31 * time.Second)
	tick(t, h)
	if p := lastPlacement(rec); len(p.Evictions) != 1 || p.Evictions[0].Held != failover.HeldNotHealthy {
		t.Fatalf("a replacement that is placed but not healthy holds the copy past its grace period: %+v", p.Evictions)
	}
	workHealthy(t, h, clk, "cluster2", 1, 4)
	p := lastPlacement(rec)
	if len(p.Evictions) != 1 || p.Evictions[0].Kept() || p.Evictions[0].PurgeReason != failover.PurgedReplacementHealthy || p.Evictions[0].Held != "" {
		t.Fatalf("a healthy replacement releases the held copy: %+v", p.Evictions)
	}
	if n := len(failoverRecords(rec, events.TypeFailoverPurged)); n != 1 {
		t.Fatalf("want one purge record, got %d", n)
	}
}
