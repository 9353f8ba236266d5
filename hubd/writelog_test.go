package hubd

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTheWriteLogWritesAgainWhatTheHubLost(t *testing.T) {
	l := newWriteLog()
	status := map[string]any{"phase": "Ready", "lastTransitionTime": "2026-12-02T10:00:00Z"}
	steps := []struct {
		what, key, uid string
		want           any
		write          bool
	}{
		{"first sight: written", "binding/default/web", "", status, true},
		{"the hub holds it now (its UID seen the first time): nothing to write", "binding/default/web", "u1", status, false},
		{"only a time differs: nothing to write", "binding/default/web", "u1", map[string]any{"phase": "Ready", "lastTransitionTime": "2026-12-02T11:00:00Z"}, false},
		{"content changed: written", "binding/default/web", "u1", map[string]any{"phase": "Failed"}, true},
		{"deleted on the hub: written again", "binding/default/web", "", map[string]any{"phase": "Failed"}, true},
		{"the hub holds what was written again", "binding/default/web", "u2", map[string]any{"phase": "Failed"}, false},
		{"made anew by someone else (another UID): written again", "binding/default/web", "u3", map[string]any{"phase": "Failed"}, true},
	}
	for _, s := range steps {
		if got := l.changed(s.key, s.uid, s.want); got != s.write {
			t.Fatalf("%s: changed = %v, want %v", s.what, got, s.write)
		}
	}
	l.sweep()
	// A round that does not touch a key forgets it: an object gone from
	// the bus or the hub and back later is written again.
	l.sweep()
	if !l.changed("binding/default/web", "u3", map[string]any{"phase": "Failed"}) {
		t.Fatal("a key untouched for a round was remembered")
	}
	l.record("event/default/web.flotilla-1")
	l.sweep()
	if !l.done("event/default/web.flotilla-1") {
		t.Fatal("a Warning Event recorded and touched in the last round was forgotten")
	}
}

// A condition keeps its transition time while its status holds, and is
// forgotten with its object: a round that no longer sees it drops it.
func TestTheWriteLogKeepsTransitionsAndForgetsThemWithTheirObject(t *testing.T) {
	l := newWriteLog()
	t1 := metav1.NewTime(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
	t2 := metav1.NewTime(t1.Add(time.Minute))
	cond := func(at metav1.Time) []metav1.Condition {
		return []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue, Reason: "BindingScheduled", LastTransitionTime: at}}
	}
	l.keepTransitions("binding/default/web", cond(t1))
	l.sweep()
	if got := l.keepTransitions("binding/default/web", cond(t2)); !got[0].LastTransitionTime.Equal(&t1) {
		t.Fatalf("an unchanged condition moved its time to %s", got[0].LastTransitionTime)
	}
	l.sweep()
	l.sweep() // a round without the binding
	if len(l.conditions) != 0 {
		t.Fatalf("conditions of an object gone for a round are kept: %v", l.conditions)
	}
}
