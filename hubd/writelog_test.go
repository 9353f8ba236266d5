package hubd

import "testing"

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
