package executord

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// publishRegistration announces member1 (push mode: its kubeconfig sealed
// to key) at generation gen, or its deregistration.
func publishRegistration(t *testing.T, bus *natsbus.Bus, key *sealing.Key, server string, typ events.Type, gen int64) {
	t.Helper()
	reg := events.ClusterRegistration{Name: "member1", Generation: gen}
	if typ == events.TypeClusterRegistered {
		reg = eventstest.SealedRegistration(t, key, "member1", server, gen)
	}
	e, err := events.New(typ, "/test", "member1", reg)
	if err == nil {
		err = bus.Publish(context.Background(), events.MemberSubject("member1"), e)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A cluster deleted while it held a copy, which the next placement moves
// away, and then joined again: the worker of the cluster joined again
// removes the copy (it used to stay there, Deleting, for good: the work
// records left with the old worker).
func TestAClusterJoinedAgainLosesTheCopyItsPlacementNoLongerHolds(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	keyPath := filepath.Join(t.TempDir(), "credentials.key")
	key, err := sealing.LoadOrCreate(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.CredentialsKey, cfg.ResyncInterval = keyPath, 10*time.Millisecond
	d, err := New(cfg, Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth(), Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = d.Run(ctx) }()

	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterRegistered, 1)
	publishPlacement(t, bus, placement(1, 0, on("member1", 2)))
	waitFor(t, "web applied in member1 and its status recorded", func() bool {
		_, typ := latestWork(t, bus)
		return member.has("deployments/default/web") && typ == events.TypeWorkStatusChanged
	})

	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterDeregistered, 2)
	waitFor(t, "member1's worker stopped", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.workers["member1"] == nil
	})
	publishPlacement(t, bus, placement(2, time.Second, on("member2", 2)))
	time.Sleep(200 * time.Millisecond)
	if !member.has("deployments/default/web") {
		t.Fatal("nothing serves member1 while it is deleted: the copy cannot have been removed yet")
	}

	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterRegistered, 3)
	waitFor(t, "the copy removed from member1 once it joins again", func() bool { return !member.has("deployments/default/web") })
}
