package schedulerd

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

// assignedSubjects are the subjects of the assignments rec holds, sorted.
func assignedSubjects(rec *eventstest.Recorder) []string {
	var out []string
	for _, p := range rec.OfType(events.TypeWorkAssigned) {
		out = append(out, p.Subject)
	}
	slices.Sort(out)
	return out
}

// Assignments are written only for a cluster in Pull mode (their only
// reader is a member's own executord); a cluster that turns to Pull gets
// the assignments of the placements that concern it at that moment.
func TestAssignmentsGoOnlyToPullClustersAndToAClusterThatTurnsToPull(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
		join(t, h, c, true)
	}
	ctx := context.Background()
	pull := events.ClusterRegistration{Name: "cluster2", Generation: 2, Spec: policy.ClusterSpec{SyncMode: "Pull"}}
	if err := h.Handle(ctx, ev(t, events.TypeClusterRegistered, pull)); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(6, 1, map[string]int64{"cluster1": 3, "cluster2": 2, "cluster3": 1}))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{events.AssignmentSubject("cluster2", key)}, assignedSubjects(rec)); diff != "" {
		t.Fatalf("assignments after the placement (-want +got):\n%s", diff)
	}
	turned := events.ClusterRegistration{Name: "cluster3", Generation: 2, Spec: policy.ClusterSpec{SyncMode: "Pull"}}
	if err := h.Handle(ctx, ev(t, events.TypeClusterRegistered, turned)); err != nil {
		t.Fatal(err)
	}
	want := []string{events.AssignmentSubject("cluster2", key), events.AssignmentSubject("cluster3", key)}
	slices.Sort(want)
	if diff := cmp.Diff(want, assignedSubjects(rec)); diff != "" {
		t.Fatalf("assignments after cluster3 turned to Pull (-want +got):\n%s", diff)
	}
}
