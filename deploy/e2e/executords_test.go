package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// clusterOwner maps each member to the executord instance owning it (a
// member no instance owns is left out).
func clusterOwner(s *system) map[string]string {
	out := map[string]string{}
	for in, owns := range owned(s, "executord") {
		for _, c := range owns {
			if in == readmodel.Unowned {
				continue
			}
			out[c] = in
		}
	}
	return out
}

// TestTheStandbyExecutordServesAKilledOwnersClusterWithinALease runs two
// push-mode executords: they split the three members, one owner each, and
// only a cluster's owner reports its work; when the owner of cluster2 is
// SIGKILLed, templates applied afterwards still reach cluster2 within
// about a lease, from the survivor.
func TestTheStandbyExecutordServesAKilledOwnersClusterWithinALease(t *testing.T) {
	s := newSystem(t)
	lease := "--lease=" + instanceLease.String()
	for _, d := range []string{"policyd", "healthd", "schedulerd", "executord-a"} {
		s.start(d, lease) // whichever starts first makes the buckets, with its lease
	}
	s.waitDaemonsReady("policyd", "healthd", "schedulerd")
	waitInstanceReady(s, "executord-a")
	s.joinAll()
	ns := fmt.Sprintf("executords-%d", time.Now().Unix())
	t.Cleanup(func() { s.deleteNamespace(ns) })
	const perBatch = 5
	applied := 0
	apply := func(name string) {
		docs := deployments(ns, applied, applied+perBatch) // with the Duplicated policy "ha"
		applied += perBatch
		s.mustCLI("apply", "-f", s.write(name, docs))
	}
	ownersWithin := func(what string, ok func(map[string]string) bool, d time.Duration) (map[string]string, time.Duration) {
		start := time.Now()
		var got map[string]string
		eventually(t, d, what, func() error {
			if got = clusterOwner(s); !ok(got) {
				return fmt.Errorf("owners %v", got)
			}
			return nil
		})
		return got, time.Since(start)
	}
	allOwnedBy := func(in string) func(map[string]string) bool {
		return func(o map[string]string) bool {
			return len(o) == len(members) && !slices.ContainsFunc(members, func(m string) bool { return o[m] != in })
		}
	}

	ownersWithin("executord-a to own every member", allOwnedBy("executord-a"), 2*instanceLease)
	s.start("executord-b", lease)
	waitInstanceReady(s, "executord-b")
	owners, took := ownersWithin("a and b to share the members", func(o map[string]string) bool {
		return len(o) == len(members) && slices.ContainsFunc(members, func(m string) bool { return o[m] == "executord-b" })
	}, 2*instanceLease)
	t.Logf("executord-b owned %v %s after it was ready (lease %s)", owners, took.Round(100*time.Millisecond), instanceLease)
	apply("a.yaml")
	s.waitDeployments(ns, applied, 90*time.Second)

	dead := owners["cluster2"]
	survivor := map[string]string{"executord-a": "executord-b", "executord-b": "executord-a"}[dead]
	s.kill(dead)
	killed := time.Now()
	apply("b.yaml")
	s.waitDeployments(ns, applied, 2*instanceLease+10*time.Second)
	t.Logf("%d templates applied after %s (owner of cluster2) was killed ran in every member %s after the kill (lease %s)",
		perBatch, dead, time.Since(killed).Round(100*time.Millisecond), instanceLease)
	ownersWithin(survivor+" to own every member", allOwnedBy(survivor), 2*instanceLease)

	// Only a cluster's owner reported its work: each member's statuses
	// came from its owner, and after the kill the dead one's clusters'
	// from the survivor.
	ctx := context.Background()
	bus, err := natsbus.Connect(ctx, s.natsURL, natsbus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	for _, m := range members {
		ms, err := bus.Replay(ctx, events.StreamWork, natsbus.ReplayOptions{Subjects: []string{events.WorkOf(m)}})
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range ms {
			var st events.WorkStatus
			if msg.Err != nil || events.Decode(msg.Event, &st) != nil || st.Key.Namespace != ns {
				continue
			}
			got := strings.TrimPrefix(msg.Event.Source(), "/executord/")
			if got != owners[m] && !(owners[m] == dead && got == survivor && msg.Event.Time().After(killed)) {
				t.Errorf("%s: %s's status at %s reported by %s, whose cluster it was not (owner %s, killed at %s)",
					m, st.Key.Name, msg.Event.Time().Format(time.RFC3339Nano), got, owners[m], killed.Format(time.RFC3339Nano))
			}
		}
	}
}
