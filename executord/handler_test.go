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
	publishMember(t, bus, key, "member1", server, typ, gen)
}

// publishMember is publishRegistration for any member name.
func publishMember(t *testing.T, bus *natsbus.Bus, key *sealing.Key, name, server string, typ events.Type, gen int64) {
	t.Helper()
	reg := events.ClusterRegistration{Name: name, Generation: gen}
	if typ == events.TypeClusterRegistered {
		reg = eventstest.SealedRegistration(t, key, name, server, gen)
	}
	e, err := events.New(typ, "/test", name, reg)
	if err == nil {
		err = bus.Publish(context.Background(), events.MemberSubject(name), e)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// pushModeSetup is a real nats-server, a fake member, the credentials key
// registrations are sealed to and an executord configuration using it.
func pushModeSetup(t *testing.T) (*natsbus.Bus, *fakeMember, *sealing.Key, Config) {
	t.Helper()
	_, bus := eventstest.Server(t)
	keyPath := filepath.Join(t.TempDir(), "credentials.key")
	key, err := sealing.LoadOrCreate(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.CredentialsKey, cfg.ResyncInterval = keyPath, 10*time.Millisecond
	return bus, newFakeMember(t), key, cfg
}

// webOnMember1 runs an executord with member1 joined and web applied there.
func webOnMember1(t *testing.T) (*Daemon, *natsbus.Bus, *fakeMember, *sealing.Key) {
	t.Helper()
	bus, member, key, cfg := pushModeSetup(t)
	d, err := New(cfg, Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth(), Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = d.Run(ctx) }()
	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterRegistered, 1)
	publishPlacement(t, bus, placement(1, 0, on("member1", 2)))
	waitFor(t, "web applied in member1 and its status recorded", func() bool {
		_, typ := latestWork(t, bus)
		return member.has("deployments/default/web") && typ == events.TypeWorkStatusChanged
	})
	return d, bus, member, key
}

// A cluster deleted while a removal of its copy was under way (the
// placement had moved away, the member was down), then joined again: the
// worker of the cluster joined again finishes the removal (the copy used
// to stay there, Deleting, for good: the work records left with the old
// worker).
func TestAClusterJoinedAgainFinishesTheRemovalUnderWayWhenItLeft(t *testing.T) {
	d, bus, member, key := webOnMember1(t)
	member.down.Store(true)
	publishPlacement(t, bus, placement(2, time.Second, on("member2", 2)))
	time.Sleep(300 * time.Millisecond) // the removal is held: the member is down
	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterDeregistered, 2)
	waitFor(t, "member1's worker stopped", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.workers["member1"] == nil
	})
	member.down.Store(false)
	time.Sleep(200 * time.Millisecond)
	if !member.has("deployments/default/web") {
		t.Fatal("nothing serves member1 while it is deleted: the copy cannot have been removed yet")
	}

	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterRegistered, 3)
	waitFor(t, "the copy removed from member1 once it joins again", func() bool { return !member.has("deployments/default/web") })
}

// A cluster deleted while its copy was placed there (unjoin
// --cascade=orphan, or its Cluster deleted) releases the copy: it stays in
// the member, its work is Deleted with reason Released, and the worker of
// the cluster joined again leaves it, although the placement has moved
// away meanwhile. It deleted what the user had chosen to keep.
func TestAClusterThatLeftWithItsCopyPlacedKeepsItWhenJoinedAgain(t *testing.T) {
	d, bus, member, key := webOnMember1(t)

	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterDeregistered, 2)
	waitFor(t, "web released in member1", func() bool {
		st, typ := latestWork(t, bus)
		return typ == events.TypeWorkDeleted && st.Reason == events.WorkReasonReleased
	})
	publishPlacement(t, bus, placement(2, time.Second, on("member2", 2)))
	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterRegistered, 3)
	waitFor(t, "member1's new worker", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.workers["member1"] != nil
	})
	time.Sleep(500 * time.Millisecond) // the new worker has read the placements
	if !member.has("deployments/default/web") {
		t.Fatal("the released copy was removed from member1 when it joined again")
	}
	if _, deletes := member.counts(); deletes != 0 {
		t.Errorf("%d delete(s) sent to member1, want none", deletes)
	}
}

// An executord restarted after it followed a cluster's deletion rebuilds
// the tombstone from the member subject: a registration older than the
// deletion delivered afterwards (as a redelivery would bring it) starts no
// worker.
func TestARestartedExecutordIgnoresARegistrationOlderThanTheDeletion(t *testing.T) {
	bus, member, key, cfg := pushModeSetup(t)
	run := func() (*Daemon, context.CancelFunc) {
		d, err := New(cfg, Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth(), Registry: prometheus.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = d.Run(ctx); close(done) }()
		return d, func() { cancel(); <-done }
	}
	hasWorker := func(d *Daemon, name string) func() bool {
		return func() bool {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.workers[name] != nil
		}
	}

	// The first executord follows member1's registration and deletion
	// (its members consumer moves past both), then stops.
	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterRegistered, 1)
	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterDeregistered, 2)
	publishMember(t, bus, key, "member2", member.srv.URL, events.TypeClusterRegistered, 1)
	first, stop := run()
	waitFor(t, "member2's worker in the first executord", hasWorker(first, "member2"))
	waitFor(t, "the members consumer past all three registrations", func() bool {
		c, err := bus.JetStream().Consumer(context.Background(), events.StreamPolicy, MembersConsumer)
		if err != nil {
			return false
		}
		info, err := c.Info(context.Background())
		return err == nil && info.NumPending == 0 && info.NumAckPending == 0
	})
	stop()

	// The second one catches up (member2's worker comes from the catch-up,
	// which reads member1's deletion before it), then is handed the stale
	// registration and, after it, member3's.
	second, stop := run()
	defer stop()
	waitFor(t, "member2's worker in the restarted executord", hasWorker(second, "member2"))
	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterRegistered, 1)
	publishMember(t, bus, key, "member3", member.srv.URL, events.TypeClusterRegistered, 1)
	waitFor(t, "member3's worker", hasWorker(second, "member3"))
	if hasWorker(second, "member1")() {
		t.Fatal("a registration older than member1's deletion started a worker after a restart")
	}
}

// schedulerd moves a leaving cluster's templates away on the same
// deregistration that stops its worker, so the placement that leaves it
// can reach the worker first. The copy is then released, as the
// deregistration would have released it, not deleted: deleting it undid
// an unjoin --cascade=orphan. (The daemon's lock holds the deregistration
// back until the worker has handled the placement.)
func TestAPlacementLeavingADepartedClusterReleasesItsCopy(t *testing.T) {
	d, bus, member, key := webOnMember1(t)
	d.mu.Lock()
	w := d.workers["member1"]
	publishRegistration(t, bus, key, member.srv.URL, events.TypeClusterDeregistered, 2)
	away, err := events.New(events.TypePlacementDecided, "/schedulerd/test", web.String(), placement(2, time.Second, on("member2", 2)))
	if err != nil {
		d.mu.Unlock()
		t.Fatal(err)
	}
	err = w.HandlePlacement(context.Background(), away)
	d.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "web released in member1", func() bool {
		st, typ := latestWork(t, bus)
		return typ == events.TypeWorkDeleted && st.Reason == events.WorkReasonReleased
	})
	if _, deletes := member.counts(); deletes != 0 || !member.has("deployments/default/web") {
		t.Errorf("%d delete(s) sent to member1 (web there: %t), want none: the cluster had left", deletes, member.has("deployments/default/web"))
	}
}
