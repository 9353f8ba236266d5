package schedulerd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

// assignmentLines describe the assignments rec holds from index from on,
// one line each: type, subject, the replicas the cluster holds (none: it
// holds no copy), and whether the binding to apply came with it.
func assignmentLines(t *testing.T, rec *eventstest.Recorder, from int) []string {
	t.Helper()
	var out []string
	for _, p := range rec.Events[from:] {
		typ := events.Type(p.Event.Type())
		if typ != events.TypeWorkAssigned && typ != events.TypeWorkUnassigned {
			continue
		}
		var a events.PlacementDecision
		if err := events.Decode(p.Event, &a); err != nil {
			t.Fatal(err)
		}
		held := "none"
		if len(a.Clusters) == 1 {
			held = fmt.Sprint(a.Clusters[0].Replicas)
		}
		out = append(out, fmt.Sprintf("%s %s %s binding=%t", typ, p.Subject, held, a.Binding != nil))
	}
	return out
}

func registerMode(t *testing.T, h *Handler, name string, generation int64, mode string) {
	t.Helper()
	r := events.ClusterRegistration{Name: name, Generation: generation, Spec: policy.ClusterSpec{SyncMode: mode}}
	if err := h.Handle(context.Background(), ev(t, events.TypeClusterRegistered, r)); err != nil {
		t.Fatal(err)
	}
}

// Assignments are written for a cluster that keeps a copy only while it is
// in Pull mode, all of them (with the binding to apply) when it turns to
// Pull, and to any cluster, whatever its mode, when it holds the template
// no more.
func TestAssignmentsGoToPullClustersAndToAnyClusterThatHoldsATemplateNoMore(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
		join(t, h, c, true)
	}
	registerMode(t, h, "cluster2", 2, policy.SyncModePull)
	ctx := context.Background()
	sub := func(c string) string { return events.AssignmentSubject(c, key) }
	assigned, unassigned := string(events.TypeWorkAssigned), string(events.TypeWorkUnassigned)
	for _, step := range []struct {
		name string
		do   func()
		want []string
	}{
		{"a placement on three clusters is assigned to the Pull one only", func() {
			if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(6, 1, map[string]int64{"cluster1": 3, "cluster2": 2, "cluster3": 1}))); err != nil {
				t.Fatal(err)
			}
		}, []string{assigned + " " + sub("cluster2") + " 2 binding=true"}},
		{"a cluster that turns to Pull gets what it holds", func() { registerMode(t, h, "cluster3", 2, policy.SyncModePull) },
			[]string{assigned + " " + sub("cluster3") + " 1 binding=true"}},
		{"a registration that stays Pull assigns nothing again", func() { registerMode(t, h, "cluster3", 3, policy.SyncModePull) }, nil},
		{"a Push cluster the placement leaves hears it", func() {
			if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(6, 2, map[string]int64{"cluster2": 1, "cluster3": 1}))); err != nil {
				t.Fatal(err)
			}
		}, []string{
			assigned + " " + sub("cluster1") + " none binding=true",
			assigned + " " + sub("cluster2") + " 3 binding=true",
			assigned + " " + sub("cluster3") + " 3 binding=true",
		}},
		{"a removal reaches every cluster that held the template", func() {
			if err := h.Handle(ctx, ev(t, events.TypeBindingRemoved, events.Binding{Key: key, Revision: 3})); err != nil {
				t.Fatal(err)
			}
		}, []string{unassigned + " " + sub("cluster2") + " none binding=false", unassigned + " " + sub("cluster3") + " none binding=false"}},
	} {
		from := len(rec.Events)
		step.do()
		if diff := cmp.Diff(step.want, assignmentLines(t, rec, from)); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", step.name, diff)
		}
	}
}

// With no member in Pull mode, a placement is assigned to no cluster that
// keeps a copy, and a cluster it leaves still hears it.
func TestWithEveryClusterPushedOnlyAClusterAPlacementLeavesIsAssigned(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
		join(t, h, c, true)
	}
	ctx := context.Background()
	from := len(rec.Events)
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(6, 1, map[string]int64{"cluster1": 3, "cluster2": 2, "cluster3": 1}))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), assignmentLines(t, rec, from)); diff != "" {
		t.Fatalf("a first placement (-want +got):\n%s", diff)
	}
	from = len(rec.Events)
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(6, 2, map[string]int64{"cluster2": 1, "cluster3": 1}))); err != nil {
		t.Fatal(err)
	}
	want := []string{string(events.TypeWorkAssigned) + " " + events.AssignmentSubject("cluster1", key) + " none binding=true"}
	if diff := cmp.Diff(want, assignmentLines(t, rec, from)); diff != "" {
		t.Fatalf("a placement that leaves cluster1 (-want +got):\n%s", diff)
	}
}

// At start, a Pull cluster gets the assignment of each placement its
// stored assignments lack or hold for an older decision: it turned to Pull
// while schedulerd was down.
func TestAtStartAPullClusterGetsTheAssignmentsItsStreamLacks(t *testing.T) {
	for _, c := range []struct {
		name    string
		cluster string
		stored  func(live events.PlacementDecision) map[events.ObjectKey]events.PlacementDecision
		want    int
	}{
		{"none stored: it turned to Pull while schedulerd was down", "cluster2",
			func(events.PlacementDecision) map[events.ObjectKey]events.PlacementDecision { return nil }, 1},
		{"the assignment of this very decision stored: nothing", "cluster2",
			func(live events.PlacementDecision) map[events.ObjectKey]events.PlacementDecision {
				return map[events.ObjectKey]events.PlacementDecision{key: live}
			}, 0},
		{"the assignment of an earlier decision stored", "cluster2",
			func(live events.PlacementDecision) map[events.ObjectKey]events.PlacementDecision {
				live.DecidedAt = live.DecidedAt.Add(-time.Minute)
				return map[events.ObjectKey]events.PlacementDecision{key: live}
			}, 1},
		{"a Push cluster: nothing", "cluster1",
			func(events.PlacementDecision) map[events.ObjectKey]events.PlacementDecision { return nil }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &eventstest.Recorder{}
			h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
			for _, m := range []string{"cluster1", "cluster2"} {
				join(t, h, m, true)
			}
			registerMode(t, h, "cluster2", 2, policy.SyncModePull)
			if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, weighted(3, 1, map[string]int64{"cluster1": 1, "cluster2": 2}))); err != nil {
				t.Fatal(err)
			}
			live := rec.OfType(events.TypeWorkAssigned)
			if len(live) != 1 {
				t.Fatalf("%d assignments at the placement, want 1", len(live))
			}
			var a events.PlacementDecision
			if err := events.Decode(live[0].Event, &a); err != nil {
				t.Fatal(err)
			}
			from := len(rec.Events)
			n, err := h.AssignMissing(context.Background(), c.cluster, c.stored(a))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, n); diff != "" {
				t.Errorf("published (-want +got):\n%s", diff)
			}
			if got := len(assignmentLines(t, rec, from)); got != n {
				t.Errorf("%d assignments recorded, %d said", got, n)
			}
		})
	}
}

// A cluster that turned to Pull while schedulerd was down gets, from the
// next schedulerd's start, the assignment of each placement that keeps a
// copy in it, with the binding to apply, once: a later start finds it
// stored and publishes nothing.
func TestAClusterThatTurnedPullWhileSchedulerdWasDownGetsItsAssignmentsAtStart(t *testing.T) {
	_, bus := eventstest.Server(t)
	spec := Consumers(DefaultConfig())[0]
	publishAt(t, bus, events.MemberSubject("cluster1"), events.TypeClusterRegistered, events.ClusterRegistration{Name: "cluster1", Generation: 1})
	publishAt(t, bus, events.HealthSubject("cluster1"), events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "cluster1", Ready: true, State: "Ready", ObservedAt: time.Now()})
	seq := publishAt(t, bus, events.BindingSubject(key), events.TypeBindingChanged, weighted(2, 1, map[string]int64{"cluster1": 1}))
	assignments := func() []string {
		t.Helper()
		ms, err := bus.Replay(context.Background(), events.StreamWork, natsbus.ReplayOptions{Subjects: []string{events.AssignmentsOf("cluster1")}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			var a events.PlacementDecision
			if m.Err != nil || events.Decode(m.Event, &a) != nil {
				t.Fatalf("assignment %v undecodable", m.Err)
			}
			out = append(out, fmt.Sprintf("%s %d binding=%t", m.Event.Type(), len(a.Clusters), a.Binding != nil))
		}
		return out
	}
	pull := func(generation int64) func() uint64 {
		return func() uint64 {
			return publishAt(t, bus, events.MemberSubject("cluster1"), events.TypeClusterRegistered,
				events.ClusterRegistration{Name: "cluster1", Generation: generation, Spec: policy.ClusterSpec{SyncMode: policy.SyncModePull}})
		}
	}
	for _, step := range []struct {
		name   string
		before func() uint64 // published while schedulerd is down; nil: nothing
		want   []string
	}{
		{"placed while Push: no assignment", nil, nil},
		{"turned Pull while schedulerd was down: its assignment at start", pull(2), []string{string(events.TypeWorkAssigned) + " 1 binding=true"}},
		{"started again, a registration still Pull: nothing more", pull(3), []string{string(events.TypeWorkAssigned) + " 1 binding=true"}},
	} {
		if step.before != nil {
			seq = step.before()
		}
		stop := runSchedulerd(t, bus)
		eventstest.ConsumerSettled(t, bus, spec, seq, 0)
		stop()
		if diff := cmp.Diff(step.want, assignments()); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", step.name, diff)
		}
	}
}
