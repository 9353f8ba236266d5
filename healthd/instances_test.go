package healthd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// runInstance runs healthd instance name on a connection of its own to
// url; kill closes it (eventstest.Instance).
func runInstance(t *testing.T, url string, cfg Config, name string) (kill func()) {
	t.Helper()
	cfg.Instance, cfg.Lease = name, time.Second
	return eventstest.Instance(t, url, func(bus *natsbus.Bus) func(context.Context) error {
		d, err := New(cfg, Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth(), Registry: prometheus.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		return d.Run
	})
}

// transitions are cluster's health transitions seen after from: "instance state".
func transitions(s *stream, cluster string, from int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.seen[from:] {
		var h events.ClusterHealth
		if m.Err == nil && m.Event.Type() == string(events.TypeClusterHealthChanged) && events.Decode(m.Event, &h) == nil && h.Cluster == cluster {
			out = append(out, strings.TrimPrefix(m.Event.Source(), "/healthd/")+" "+h.State)
		}
	}
	return out
}

func seen(s *stream) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Two healthd instances probe one member each: a member's transitions come
// from its owner alone, and when that owner is killed the other takes the
// member over, carrying its health on (no second NotReady) and reporting
// its recovery.
func TestTwoHealthdInstancesProbeEachMemberFromItsOwnerAndTheOtherCarriesOnAKilledOnesMember(t *testing.T) {
	url, bus := eventstest.Server(t)
	keyPath := filepath.Join(t.TempDir(), "credentials.key")
	key, err := sealing.LoadOrCreate(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	ms := map[string]*fakeMember{"member1": newMember(t), "member2": newMember(t)}
	for name, m := range ms {
		register(t, bus, key, name, m.URL)
	}
	cfg := DefaultConfig()
	cfg.CredentialsKey = keyPath
	cfg.ProbeInterval, cfg.ProbeTimeout, cfg.CapacityInterval, cfg.SnapshotInterval = 20*time.Millisecond, 200*time.Millisecond, time.Hour, 0
	var s stream
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = bus.Watch(ctx, events.StreamHealth, []string{events.AllHealth}, false, s.add) }()

	kill := map[string]func(){"a": runInstance(t, url, cfg, "a")}
	waitUntil(t, "a to own both members", func() bool {
		return cmp.Equal(map[string]string{"member1": "a", "member2": "a"}, eventstest.Leases(t, bus, "healthd"))
	})
	kill["b"] = runInstance(t, url, cfg, "b")
	var own map[string]string
	waitUntil(t, "a and b to own one member each", func() bool {
		own = eventstest.Leases(t, bus, "healthd")
		return len(own) == 2 && own["member1"] != own["member2"]
	})
	owner := own["member2"]
	other := map[string]string{"a": "b", "b": "a"}[owner]
	time.Sleep(200 * time.Millisecond) // the owner's first probes, had it not resumed, would publish now
	split := seen(&s)

	ms["member2"].failing.Store(true)
	waitUntil(t, "member2 NotReady", func() bool { return len(transitions(&s, "member2", split)) >= 2 })
	time.Sleep(200 * time.Millisecond) // a second prober, were there one, would have reported by now
	if diff := cmp.Diff([]string{owner + " Suspect", owner + " NotReady"}, transitions(&s, "member2", split)); diff != "" {
		t.Errorf("member2's transitions while %s owns it (-want +got):\n%s", owner, diff)
	}

	kill[owner]()
	waitUntil(t, other+" to own both members", func() bool {
		return cmp.Equal(map[string]string{"member1": other, "member2": other}, eventstest.Leases(t, bus, "healthd"))
	})
	time.Sleep(300 * time.Millisecond) // probes of the failing member, after the takeover
	ms["member2"].failing.Store(false)
	waitUntil(t, "member2 Ready again", func() bool {
		ts := transitions(&s, "member2", split)
		return ts[len(ts)-1] == other+" Ready"
	})
	if diff := cmp.Diff([]string{owner + " Suspect", owner + " NotReady", other + " Ready"}, transitions(&s, "member2", split)); diff != "" {
		t.Errorf("member2's transitions across the takeover (-want +got):\n%s", diff)
	}
}
