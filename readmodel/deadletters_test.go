package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

func TestDeadLettersListsWhatConsumersGaveUpOnOldestFirst(t *testing.T) {
	r := &recorder{t: t}
	garbage := events.DeadLetter{Consumer: "executord-cluster1", Reason: "not a CloudEvent 1.0: ce-specversion is \"\"", Stream: events.StreamPlacement, Sequence: 7,
		Subject: events.PlacementSubject(myApp), Deliveries: 1}
	refused := events.DeadLetter{Consumer: "policyd-input", Reason: "unknown event type", Stream: events.StreamInput, Sequence: 3, Subject: events.InputSubject(myApp), Deliveries: 1}
	first := r.stored(events.TypeEventDeadLettered, garbage)
	other := r.stored(events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "cluster1"})
	second := r.stored(events.TypeEventDeadLettered, refused)
	unreadable := Stored{Sequence: 4, Err: errInvalid}
	want := []DeadLetter{{DeadLetter: garbage, At: first.Time}, {DeadLetter: refused, At: second.Time}}
	if diff := cmp.Diff(want, DeadLetters([]Stored{first, other, unreadable, second})); diff != "" {
		t.Errorf("dead letters (-want +got):\n%s", diff)
	}
}
