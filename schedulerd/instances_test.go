package schedulerd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

// runInstance runs schedulerd instance name on its own connection to url.
func runInstance(t *testing.T, url, name string) func() {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Instance, cfg.Partitions, cfg.Lease = name, 4, time.Second
	d, err := New(cfg, Deps{Bus: eventstest.Connect(t, url), Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	return eventstest.Running(t, d.Run)
}

// decided reads every placement.decided stored, by key: the binding
// revisions decided, in order, and the instances that decided them.
func decided(t *testing.T, bus *natsbus.Bus) (revisions map[string][]int64, by map[string][]string) {
	t.Helper()
	ms, err := bus.Replay(context.Background(), events.StreamPlacement, natsbus.ReplayOptions{Subjects: []string{events.AllPlacements}})
	if err != nil {
		t.Fatal(err)
	}
	revisions, by = map[string][]int64{}, map[string][]string{}
	for _, m := range ms {
		var p events.PlacementDecision
		if m.Err != nil || events.Type(m.Event.Type()) != events.TypePlacementDecided || events.Decode(m.Event, &p) != nil {
			continue
		}
		revisions[p.Key.Name] = append(revisions[p.Key.Name], p.BindingRevision)
		by[p.Key.Name] = append(by[p.Key.Name], strings.TrimPrefix(m.Event.Source(), "/schedulerd/"))
	}
	return revisions, by
}

// Two schedulerd instances split the partitions; each template is decided
// once per binding revision, by the instance holding its partition; when
// one stops, the other takes every partition and decides what follows.
func TestTwoSchedulerdInstancesShareTheTemplatesAndOneTakesAllWhenTheOtherStops(t *testing.T) {
	url, bus := eventstest.Server(t)
	publishAt(t, bus, events.MemberSubject("cluster1"), events.TypeClusterRegistered, events.ClusterRegistration{Name: "cluster1", Generation: 1})
	publishAt(t, bus, events.HealthSubject("cluster1"), events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "cluster1", Ready: true, State: "Ready", ObservedAt: time.Now()})
	stopA := runInstance(t, url, "a")
	eventstest.Eventually(t, "a to hold every partition", func() bool { return cmp.Equal(map[string]int{"a": 4}, eventstest.PartitionsHeld(t, bus, "schedulerd")) })
	runInstance(t, url, "b")
	eventstest.Eventually(t, "a and b to hold two partitions each", func() bool {
		return cmp.Equal(map[string]int{"a": 2, "b": 2}, eventstest.PartitionsHeld(t, bus, "schedulerd"))
	})

	const templates = 24
	bind := func(rev int64) {
		for i := range templates {
			b := weighted(2, rev, map[string]int64{"cluster1": 1})
			b.Key.Name = fmt.Sprintf("app-%02d", i)
			publishAt(t, bus, events.BindingSubject(b.Key), events.TypeBindingChanged, b)
		}
	}
	bind(1)
	var revisions map[string][]int64
	var by map[string][]string
	eventstest.Eventually(t, "every template placed", func() bool { revisions, by = decided(t, bus); return len(revisions) == templates })
	owners := map[string]bool{}
	for name, revs := range revisions {
		if diff := cmp.Diff([]int64{1}, revs); diff != "" {
			t.Errorf("%s: binding revisions decided (-want +got):\n%s", name, diff)
		}
		owners[by[name][0]] = true
	}
	if diff := cmp.Diff(map[string]bool{"a": true, "b": true}, owners); diff != "" {
		t.Errorf("instances that decided (-want +got):\n%s", diff)
	}

	stopA()
	eventstest.Eventually(t, "b to hold every partition", func() bool { return cmp.Equal(map[string]int{"b": 4}, eventstest.PartitionsHeld(t, bus, "schedulerd")) })
	bind(2)
	eventstest.Eventually(t, "every template placed again", func() bool {
		revisions, by = decided(t, bus)
		for _, revs := range revisions {
			if revs[len(revs)-1] != 2 {
				return false
			}
		}
		return true
	})
	for name, revs := range revisions {
		if diff := cmp.Diff([]int64{1, 2}, revs); diff != "" {
			t.Errorf("%s: binding revisions decided (-want +got):\n%s", name, diff)
		}
		if got := by[name][len(by[name])-1]; got != "b" {
			t.Errorf("%s: revision 2 decided by %s, want b", name, got)
		}
	}
}

// A template bound and removed while its partition had no owner is
// withdrawn by the instance that takes the partition over, from the
// placement its previous owner stored; nothing is decided meanwhile.
func TestATemplateRemovedWhileNobodyOwnedItIsWithdrawnByTheInstanceTakingItOver(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	join(t, h, "cluster1", true)
	before := len(rec.Events)
	owned := false
	h.SetOwner(func(events.ObjectKey) bool { return owned })
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(3, 1, map[string]int64{"cluster1": 1}))); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, ev(t, events.TypeBindingRemoved, events.Binding{Key: key, APIVersion: "apps/v1", Generation: 1, Revision: 2})); err != nil {
		t.Fatal(err)
	}
	if got := len(rec.Events) - before; got != 0 {
		t.Fatalf("an instance owning nothing published %d events", got)
	}
	owned = true
	stored := events.PlacementDecision{Key: key, Generation: 1, BindingRevision: 1, Scheduled: true,
		Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 3}}, DecidedAt: time.Now()}
	if err := h.TakeOver(ctx, []events.PlacementDecision{stored}, nil, everyKey); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, p := range rec.OfType(events.TypePlacementRemoved) {
		var d events.PlacementDecision
		if events.Decode(p.Event, &d) == nil {
			got = append(got, d.BindingRevision)
		}
	}
	if diff := cmp.Diff([]int64{2}, got); diff != "" {
		t.Errorf("withdrawals, by binding revision (-want +got):\n%s", diff)
	}
}

// A binding of a template another instance decides is kept undecoded; the
// instance taking its partition over decodes it and decides it.
func TestABindingLeftUnreadIsDecidedByTheInstanceTakingItsPartitionOver(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	join(t, h, "cluster1", true)
	before := len(rec.Events)
	owned := false
	h.SetOwner(func(events.ObjectKey) bool { return owned })
	delivered := events.WithDelivery(context.Background(), events.Delivery{Stream: events.StreamPolicy, Subject: events.BindingSubject(key), Sequence: 9, Delivered: 1})
	if err := h.Handle(delivered, ev(t, events.TypeBindingChanged, weighted(3, 1, map[string]int64{"cluster1": 1}))); err != nil {
		t.Fatal(err)
	}
	if _, decoded := h.book.bindings[key]; decoded || len(rec.Events) != before {
		t.Fatalf("a binding of a template decided elsewhere was decoded (%v) or decided (%d events)", decoded, len(rec.Events)-before)
	}
	owned = true
	if err := h.TakeOver(context.Background(), nil, nil, everyKey); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rec.OfType(events.TypePlacementDecided) {
		var d events.PlacementDecision
		if events.Decode(p.Event, &d) == nil {
			for _, c := range d.Clusters {
				got = append(got, fmt.Sprintf("%s revision %d: %d on %s", d.Key.Name, d.BindingRevision, c.Replicas, c.Name))
			}
		}
	}
	if diff := cmp.Diff([]string{key.Name + " revision 1: 3 on cluster1"}, got); diff != "" {
		t.Errorf("placements on taking over (-want +got):\n%s", diff)
	}
}

// settled, which a hand-off waits on before releasing a partition, returns
// at once when no decision runs, and waits for the one running (here:
// the handler's lock held) until it is over or the wait's time is up.
func TestSettledWaitsForTheRunningDecision(t *testing.T) {
	h := NewHandler(&eventstest.Recorder{}, "t", core.New(plugins.DefaultProfile()), nil)
	if err := h.settled(context.Background()); err != nil {
		t.Fatalf("idle: %v", err)
	}
	h.mu.Lock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := h.settled(ctx); err == nil {
		t.Fatal("settled returned while a decision held the handler")
	}
	done := make(chan error, 1)
	go func() { done <- h.settled(context.Background()) }()
	time.Sleep(20 * time.Millisecond)
	h.mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("settled did not return once the decision was over")
	}
}
