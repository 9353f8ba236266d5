package healthd

import (
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

func TestTheSnapshotHoldsEveryProbedMemberWithItsCurrentState(t *testing.T) {
	ready, lost, fresh := newTracker(10*time.Second), newTracker(10*time.Second), newTracker(10*time.Second)
	ready.Observe(good, t0)
	for i := range 3 {
		lost.Observe(refused, t0.Add(time.Duration(i)*time.Second))
	}
	lost.Evaluate(t0.Add(20 * time.Second))
	d := &Daemon{probers: map[string]*prober{
		"zeta":  {reg: events.ClusterRegistration{Name: "zeta"}, tracker: ready},
		"alpha": {reg: events.ClusterRegistration{Name: "alpha"}, tracker: lost},
		"new":   {reg: events.ClusterRegistration{Name: "new"}, tracker: fresh},
	}}
	s := d.snapshot(t0.Add(21 * time.Second))
	var got []string
	for _, h := range s.Clusters {
		got = append(got, h.Cluster+" "+summary(h))
	}
	want := []string{
		"alpha Unreachable ready=false since=+2s failing=+0s unreachable:NoSchedule@+2s unreachable:NoExecute@+20s",
		"zeta Ready ready=true since=+0s",
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("members in name order, a member not probed yet left out:\nwant %q\ngot  %q", want, got)
	}
	if !s.TakenAt.Equal(t0.Add(21 * time.Second)) {
		t.Fatalf("taken at %v", s.TakenAt)
	}
}

func TestAnEmptySnapshotSaysThereAreNoMembers(t *testing.T) {
	s := Snapshot(nil, t0)
	if s.Clusters == nil || len(s.Clusters) != 0 {
		t.Fatalf("want an empty list (JSON []), got %#v", s.Clusters)
	}
}
