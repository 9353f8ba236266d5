package healthd

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

func TestARestartResumesEachClusterFromTheNewerOfItsTransitionAndTheSnapshot(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	// lost is a cluster Unreachable since +6s, observed at +obs, with
	// NoExecute once noExecute is set.
	lost := func(name string, obs int, noExecute bool) events.ClusterHealth {
		tr := newTracker(10 * time.Second)
		for i := range 3 {
			tr.Observe(refused, at(4+i))
		}
		if noExecute {
			tr.Evaluate(at(16))
		}
		h := tr.Health(name)
		h.ObservedAt = at(obs)
		return h
	}
	ready := func(name string, obs int) events.ClusterHealth {
		tr := newTracker(10 * time.Second)
		tr.Observe(good, at(0))
		h := tr.Health(name)
		h.ObservedAt = at(obs)
		return h
	}
	render := func(m map[string]Restored) string {
		var out []string
		for name, r := range m {
			out = append(out, fmt.Sprintf("%s %s unstored=%t", name, summary(r.Health), r.Unstored))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	cases := []struct {
		name        string
		transitions []Transition
		snap        *events.HealthSnapshot
		want        string
	}{
		{"without a snapshot, the last transitions",
			[]Transition{{lost("c1", 6, false), at(6)}}, nil,
			"c1 Unreachable ready=false since=+6s failing=+4s unreachable:NoSchedule@+6s unstored=false"},
		{"a newer snapshot entry carries a transition that was never stored, and is published again",
			[]Transition{{lost("c1", 6, false), at(6)}},
			&events.HealthSnapshot{Clusters: []events.ClusterHealth{lost("c1", 20, true)}, TakenAt: at(21)},
			"c1 Unreachable ready=false since=+6s failing=+4s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s unstored=true"},
		{"a newer snapshot entry that says what the transition says is not published again",
			[]Transition{{ready("c1", 0), at(0)}},
			&events.HealthSnapshot{Clusters: []events.ClusterHealth{ready("c1", 60)}, TakenAt: at(61)},
			"c1 Ready ready=true since=+0s unstored=false"},
		{"an older snapshot entry loses to a later transition",
			[]Transition{{lost("c1", 16, true), at(16)}},
			&events.HealthSnapshot{Clusters: []events.ClusterHealth{ready("c1", 2)}, TakenAt: at(3)},
			"c1 Unreachable ready=false since=+6s failing=+4s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s unstored=false"},
		{"at the same observedAt, a snapshot taken after the transition was published wins (a taint added between probes)",
			[]Transition{{lost("c1", 14, false), at(14)}},
			&events.HealthSnapshot{Clusters: []events.ClusterHealth{lost("c1", 14, true)}, TakenAt: at(17)},
			"c1 Unreachable ready=false since=+6s failing=+4s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s unstored=true"},
		{"at the same observedAt, a snapshot taken before the transition was published loses",
			[]Transition{{lost("c1", 14, true), at(16)}},
			&events.HealthSnapshot{Clusters: []events.ClusterHealth{lost("c1", 14, false)}, TakenAt: at(15)},
			"c1 Unreachable ready=false since=+6s failing=+4s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s unstored=false"},
		{"a cluster whose every transition was lost comes from the snapshot alone, and is published",
			[]Transition{{ready("c1", 0), at(0)}},
			&events.HealthSnapshot{Clusters: []events.ClusterHealth{ready("c1", 30), ready("c2", 30)}, TakenAt: at(31)},
			"c1 Ready ready=true since=+0s unstored=false\nc2 Ready ready=true since=+0s unstored=true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := render(LastHealth(c.transitions, c.snap)); got != c.want {
				t.Fatalf("want\n%s\ngot\n%s", c.want, got)
			}
		})
	}
}
