package schedulerd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/clock"
)

// Two schedulerd instances, each owning half the partitions, race for a
// cluster with room for exactly ten replicas: forty templates of one
// replica each, published at once, end with exactly ten placed there.
func TestTwoInstancesRacingForRoomForTenReplicasPlaceExactlyTen(t *testing.T) {
	const room, templates = 10, 40
	url, bus := eventstest.Server(t)
	publishAt(t, bus, events.MemberSubject("cluster1"), events.TypeClusterRegistered, events.ClusterRegistration{Name: "cluster1", Generation: 1})
	publishAt(t, bus, events.HealthSubject("cluster1"), events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "cluster1", Ready: true, State: "Ready", ObservedAt: time.Now()})
	// 1 CPU free: ten replicas of 100m.
	publishAt(t, bus, events.CapacitySubject("cluster1"), events.TypeClusterCapacityReported, events.ClusterCapacity{Cluster: "cluster1", Nodes: 1, ReadyNodes: 1,
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourcePods: resource.MustParse("110")}, ObservedAt: time.Now()})
	runInstance(t, url, "a")
	eventstest.Eventually(t, "a to hold every partition", func() bool { return cmp.Equal(map[string]int{"a": 4}, eventstest.PartitionsHeld(t, bus, "schedulerd")) })
	runInstance(t, url, "b")
	eventstest.Eventually(t, "a and b to hold two partitions each", func() bool {
		return cmp.Equal(map[string]int{"a": 2, "b": 2}, eventstest.PartitionsHeld(t, bus, "schedulerd"))
	})

	for i := range templates {
		b := dynamicBinding(fmt.Sprintf("app-%02d", i), 1, 1)
		if err := bus.PublishAsync(events.BindingSubject(b.Key), ev(t, events.TypeBindingChanged, b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := bus.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var latest map[string]events.PlacementDecision
	var by map[string]string
	eventstest.Eventually(t, "every template decided", func() bool { latest, by = latestPlacements(t, bus); return len(latest) == templates })
	placed, deciders := int32(0), map[string]bool{}
	for name, p := range latest {
		deciders[by[name]] = true
		for _, c := range p.Clusters {
			if p.Scheduled && c.Name == "cluster1" {
				placed += c.Replicas
			}
		}
	}
	if diff := cmp.Diff(map[string]bool{"a": true, "b": true}, deciders); diff != "" {
		t.Errorf("instances that decided (-want +got):\n%s", diff)
	}
	if placed != room {
		t.Errorf("replicas placed on cluster1: want %d (its room), got %d", room, placed)
	}
}

// latestPlacements reads each template's latest placement, by name, and
// the instance that decided it.
func latestPlacements(t *testing.T, bus *natsbus.Bus) (map[string]events.PlacementDecision, map[string]string) {
	t.Helper()
	ms, err := bus.LatestPerSubject(context.Background(), events.StreamPlacement, events.AllPlacements)
	if err != nil {
		t.Fatal(err)
	}
	out, by := map[string]events.PlacementDecision{}, map[string]string{}
	for _, m := range ms {
		var p events.PlacementDecision
		if m.Err != nil || events.Type(m.Event.Type()) != events.TypePlacementDecided || events.Decode(m.Event, &p) != nil {
			continue
		}
		out[p.Key.Name] = p
		by[p.Key.Name] = m.Event.Source()[len("/schedulerd/"):]
	}
	return out, by
}

func TestALedgerEntryCountsTheOtherInstancesUnexpiredShares(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	share := func(cpu int64, until time.Duration) ledgerShare {
		return ledgerShare{Reserved: map[corev1.ResourceName]int64{corev1.ResourceCPU: cpu}, Until: now.Add(until)}
	}
	tests := []struct {
		name     string
		entry    ledgerEntry
		want     map[corev1.ResourceName]int64
		wantNext time.Time
	}{
		{"an empty entry counts nothing", ledgerEntry{}, nil, time.Time{}},
		{"this instance's own share is not counted", ledgerEntry{Shares: map[string]ledgerShare{"a": share(500, time.Minute)}}, nil, time.Time{}},
		{"the others' shares are summed, the earliest expiry kept",
			ledgerEntry{Shares: map[string]ledgerShare{"a": share(500, time.Minute), "b": share(200, time.Minute), "c": share(300, 2*time.Minute)}},
			map[corev1.ResourceName]int64{corev1.ResourceCPU: 500}, now.Add(time.Minute)},
		{"an expired share is not counted",
			ledgerEntry{Shares: map[string]ledgerShare{"b": share(200, -time.Second), "c": share(300, time.Minute)}},
			map[corev1.ResourceName]int64{corev1.ResourceCPU: 300}, now.Add(time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, next := tt.entry.others("a", now, LedgerPeers{})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("others' total (-want +got):\n%s", diff)
			}
			if !next.Equal(tt.wantNext) {
				t.Errorf("next expiry: want %v, got %v", tt.wantNext, next)
			}
		})
	}
}

// The share of an instance no longer registered counts for a lease period
// after it was written (it may be a new instance's, not seen yet), then no
// longer, whatever its expiry; a registered instance's counts until it
// expires.
func TestAShareOfAnInstanceNoLongerRegisteredStopsCountingALeaseAfterItWasWritten(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	const lease = 10 * time.Second
	written := func(ago time.Duration) ledgerShare { // as write stamps it
		return ledgerShare{Reserved: map[corev1.ResourceName]int64{corev1.ResourceCPU: 100}, Until: now.Add(ReservationTTL - ago)}
	}
	peers := LedgerPeers{Live: func() []string { return []string{"a", "b"} }, Lease: lease}
	tests := []struct {
		name     string
		instance string
		share    ledgerShare
		want     time.Time // zero: it does not count
	}{
		{"registered: until it expires", "b", written(time.Minute), now.Add(ReservationTTL - time.Minute)},
		{"registered, expired", "b", written(ReservationTTL + time.Second), time.Time{}},
		{"not registered, written 4s ago: until a lease after writing", "c", written(4 * time.Second), now.Add(lease - 4*time.Second)},
		{"not registered, written a lease ago", "c", written(lease), time.Time{}},
		{"not registered, written a minute ago", "c", written(time.Minute), time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := peers.counts(tt.instance, tt.share, now); !got.Equal(tt.want) {
				t.Errorf("counts until %v, want %v", got, tt.want)
			}
		})
	}
	// Without a list of instances, or before the registry was first read,
	// every unexpired share counts.
	if got := (LedgerPeers{}).counts("c", written(time.Minute), now); got.IsZero() {
		t.Error("with no registry known, a share must count until it expires")
	}
	notRead := LedgerPeers{Live: func() []string { return nil }, Lease: lease}
	if got := notRead.counts("c", written(time.Minute), now); got.IsZero() {
		t.Error("before the registry was first read, a share must count until it expires")
	}
}

// An instance that died holding capacity in the ledger stops holding it
// once this one sees it unregistered, at its next decision, not five
// minutes later when its share would expire.
func TestADeadInstancesShareFreesItsRoomWhenTheLedgerIsRecounted(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec, f := ledgerHandler(t, clk)
	live := []string{"a", "b"}
	h.SetLedger(f, "a", LedgerPeers{Live: func() []string { return live }, Lease: 10 * time.Second})
	// b holds 800m of cluster1, written a minute ago.
	f.set(t, "cluster1", "b", 800, clk.t.Add(ReservationTTL-time.Minute))
	h.LedgerSeen("cluster1", f.values["cluster1"], f.revs["cluster1"])
	if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, dynamicBinding("x", 12, 1))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int32{"cluster1": 2, "cluster2": 10}, replicasOn(placements(rec)[0])); diff != "" {
		t.Fatalf("while b lives, its share counts (-want +got):\n%s", diff)
	}
	// b dies; a fresh template sees cluster1's room without b's share.
	live = []string{"a"}
	if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, dynamicBinding("y", 8, 1))); err != nil {
		t.Fatal(err)
	}
	ps := placements(rec)
	// Room left: cluster1 1000m - 200m (x) = 8, cluster2 1000m - 1000m = 0.
	if diff := cmp.Diff(map[string]int32{"cluster1": 8}, replicasOn(ps[len(ps)-1])); diff != "" {
		t.Errorf("after b died (-want +got):\n%s", diff)
	}
}

func TestWritingAShareReplacesThisInstancesAndDropsExpiredOnes(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	cpu := func(milli int64) map[corev1.ResourceName]int64 {
		return map[corev1.ResourceName]int64{corev1.ResourceCPU: milli}
	}
	old := ledgerEntry{Shares: map[string]ledgerShare{
		"a":    {Reserved: cpu(100), Until: now.Add(time.Minute)},
		"b":    {Reserved: cpu(200), Until: now.Add(time.Minute)},
		"dead": {Reserved: cpu(300), Until: now.Add(-time.Second)},
	}}
	tests := []struct {
		name     string
		reserved map[corev1.ResourceName]int64
		want     ledgerEntry
	}{
		{"a new total replaces this instance's share and restarts its expiry", cpu(400), ledgerEntry{Shares: map[string]ledgerShare{
			"a": {Reserved: cpu(400), Until: now.Add(ReservationTTL)},
			"b": {Reserved: cpu(200), Until: now.Add(time.Minute)},
		}}},
		{"nothing reserved removes this instance's share", cpu(0), ledgerEntry{Shares: map[string]ledgerShare{
			"b": {Reserved: cpu(200), Until: now.Add(time.Minute)},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, old.with("a", tt.reserved, now, LedgerPeers{})); diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeLedger is an in-memory ledger store with compare-and-set; before
// runs ahead of each Put (another instance writing first).
type fakeLedger struct {
	values map[string][]byte
	revs   map[string]uint64
	rev    uint64
	puts   int
	before func(f *fakeLedger, cluster string)
}

func newFakeLedger() *fakeLedger {
	return &fakeLedger{values: map[string][]byte{}, revs: map[string]uint64{}}
}

func (f *fakeLedger) Fetch(_ context.Context, cluster string) ([]byte, uint64, error) {
	return f.values[cluster], f.revs[cluster], nil
}

func (f *fakeLedger) Put(_ context.Context, cluster string, value []byte, rev uint64) (uint64, error) {
	f.puts++
	if f.before != nil {
		f.before(f, cluster)
	}
	if f.revs[cluster] != rev {
		return 0, fmt.Errorf("at %d: %w", rev, natsbus.ErrLedgerConflict)
	}
	f.rev++
	f.values[cluster], f.revs[cluster] = value, f.rev
	return f.rev, nil
}

// set stores instance's share of cluster as another instance would.
func (f *fakeLedger) set(t *testing.T, cluster, instance string, cpuMilli int64, until time.Time) {
	t.Helper()
	var e ledgerEntry
	if v := f.values[cluster]; v != nil {
		if err := events.UnmarshalJSON(v, &e); err != nil {
			t.Fatal(err)
		}
	}
	if e.Shares == nil {
		e.Shares = map[string]ledgerShare{}
	}
	e.Shares[instance] = ledgerShare{Reserved: map[corev1.ResourceName]int64{corev1.ResourceCPU: cpuMilli}, Until: until}
	data, err := events.MarshalJSON(e)
	if err != nil {
		t.Fatal(err)
	}
	f.rev++
	f.values[cluster], f.revs[cluster] = data, f.rev
}

// ledgerHandler is a handler sharing through a fake ledger as instance
// "a", with cluster1 and cluster2 reporting 1 CPU free each.
func ledgerHandler(t *testing.T, clk *testClock) (*Handler, *eventstest.Recorder, *fakeLedger) {
	t.Helper()
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2")
	h.clock = clock.Func(clk.now)
	capacityOf(t, h, "cluster1", "0", clk.t)
	capacityOf(t, h, "cluster2", "0", clk.t)
	f := newFakeLedger()
	h.SetLedger(f, "a", LedgerPeers{})
	return h, rec, f
}

func replicasOn(p events.PlacementDecision) map[string]int32 {
	out := map[string]int32{}
	for _, c := range p.Clusters {
		out[c.Name] = c.Replicas
	}
	return out
}

// A share another instance wrote after this one last read the ledger makes
// the claim fail; the decision is made again with it, and only that one
// is published.
func TestAClaimThatMeetsAnotherInstancesNewShareDecidesAgainWithIt(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec, f := ledgerHandler(t, clk)
	// b takes 800m of cluster1 just before a's first write.
	f.before = func(f *fakeLedger, cluster string) {
		if f.values["cluster1"] == nil {
			f.set(t, "cluster1", "b", 800, clk.t.Add(time.Minute))
		}
	}
	if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, dynamicBinding("x", 12, 1))); err != nil {
		t.Fatal(err)
	}
	ps := placements(rec)
	if len(ps) != 1 {
		t.Fatalf("want one placement published, got %d", len(ps))
	}
	// Room: cluster1 2 replicas (1000m - 800m), cluster2 10.
	if diff := cmp.Diff(map[string]int32{"cluster1": 2, "cluster2": 10}, replicasOn(ps[0])); diff != "" {
		t.Errorf("replicas (-want +got):\n%s", diff)
	}
	var e ledgerEntry
	if err := events.UnmarshalJSON(f.values["cluster1"], &e); err != nil {
		t.Fatal(err)
	}
	// 2 replicas of 100m and one pod each (in milli-units).
	want := map[corev1.ResourceName]int64{corev1.ResourceCPU: 200, corev1.ResourcePods: 2000}
	if diff := cmp.Diff(want, e.Shares["a"].Reserved); diff != "" {
		t.Errorf("a's share of cluster1 (-want +got):\n%s", diff)
	}
}

func TestOnlyPlacementsFreeCapacityLimitsCostAWriteBeforeTheyArePublished(t *testing.T) {
	tests := []struct {
		name      string
		binding   events.Binding
		alone     bool
		wantPuts  int
		wantFlush int
	}{
		{"a capacity-driven placement with requests claims each cluster it adds to", dynamicBinding("x", 12, 1), false, 2, 0},
		{"an instance holding every partition claims nothing and shares by the next flush", dynamicBinding("x", 12, 1), true, 0, 2},
		{"a placement by static weights claims nothing and is shared by the next flush", func() events.Binding {
			b := weighted(4, 1, map[string]int64{"cluster1": 1, "cluster2": 1})
			b.ReplicaRequirements = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}
			return b
		}(), false, 0, 2},
		{"a template without requests claims nothing and shares nothing", func() events.Binding {
			b := dynamicBinding("x", 12, 1)
			b.ReplicaRequirements = nil
			return b
		}(), false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
			h, _, f := ledgerHandler(t, clk)
			h.SetLedger(f, "a", LedgerPeers{Alone: func() bool { return tt.alone }})
			if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, tt.binding)); err != nil {
				t.Fatal(err)
			}
			if f.puts != tt.wantPuts {
				t.Errorf("writes before publishing: want %d, got %d", tt.wantPuts, f.puts)
			}
			clk.advance(ledgerFlush)
			if err := h.FlushLedger(context.Background(), false); err != nil {
				t.Fatal(err)
			}
			if got := f.puts - tt.wantPuts; got != tt.wantFlush {
				t.Errorf("writes by the flush: want %d, got %d", tt.wantFlush, got)
			}
		})
	}
}

// Released reservations leave the ledger with the next flush, and another
// instance's share stops counting once it expires.
func TestReleasesLeaveTheLedgerAndAnExpiredShareStopsCounting(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, _, f := ledgerHandler(t, clk)
	f.set(t, "cluster2", "dead", 1000, clk.t.Add(time.Minute)) // cluster2 full
	value, rev, _ := f.Fetch(context.Background(), "cluster2")
	h.LedgerSeen("cluster2", value, rev)
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, dynamicBinding("x", 4, 1))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int32{"cluster1": 4}, replicasOn(h.book.placements[dynamicBinding("x", 4, 1).Key])); diff != "" {
		t.Errorf("with cluster2 held by another instance (-want +got):\n%s", diff)
	}
	// x removed: its reservation is released, and the flush takes a's
	// share out of cluster1's entry.
	if err := h.Handle(ctx, ev(t, events.TypeBindingRemoved, events.Binding{Key: dynamicBinding("x", 4, 1).Key, APIVersion: "apps/v1", Generation: 1, Revision: 2})); err != nil {
		t.Fatal(err)
	}
	clk.advance(ledgerFlush)
	if err := h.FlushLedger(ctx, false); err != nil {
		t.Fatal(err)
	}
	var e ledgerEntry
	if err := events.UnmarshalJSON(f.values["cluster1"], &e); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]ledgerShare(nil), e.Shares); diff != "" {
		t.Errorf("cluster1's shares after the release (-want +got):\n%s", diff)
	}
	// The dead instance's share expires: cluster2 has room again.
	clk.advance(time.Minute)
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, dynamicBinding("y", 20, 1))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int32{"cluster1": 10, "cluster2": 10}, replicasOn(h.book.placements[dynamicBinding("y", 20, 1).Key])); diff != "" {
		t.Errorf("after the other share expired (-want +got):\n%s", diff)
	}
}

// A share another instance wrote meanwhile that leaves room for this
// placement does not change it: the claim is written again at the new
// revision.
func TestAClaimThatStillFitsBesideAnotherInstancesNewShareIsWrittenAgainUnchanged(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec, f := ledgerHandler(t, clk)
	f.before = func(f *fakeLedger, cluster string) {
		if f.values["cluster1"] == nil {
			f.set(t, "cluster1", "b", 100, clk.t.Add(time.Minute))
		}
	}
	if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, dynamicBinding("x", 12, 1))); err != nil {
		t.Fatal(err)
	}
	ps := placements(rec)
	if len(ps) != 1 {
		t.Fatalf("want one placement published, got %d", len(ps))
	}
	if diff := cmp.Diff(map[string]int32{"cluster1": 6, "cluster2": 6}, replicasOn(ps[0])); diff != "" {
		t.Errorf("replicas (-want +got):\n%s", diff)
	}
	// cluster1: a conflict and a second write; cluster2: one write.
	if f.puts != 3 {
		t.Errorf("writes: want 3, got %d", f.puts)
	}
}

// A claim takes room ahead where it fits, so the placements that follow on
// the same clusters, within that room, are published without a write; the
// flush gives back what was not used.
func TestAClaimTakesRoomAheadAndThePlacementsWithinItWriteNothing(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec, f := ledgerHandler(t, clk)
	small := func(name string) events.Binding {
		b := dynamicBinding(name, 2, 1)
		b.ReplicaRequirements = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
		return b
	}
	for i, name := range []string{"x", "y", "z"} {
		if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, small(name))); err != nil {
			t.Fatal(err)
		}
		if want := 2; f.puts != want {
			t.Fatalf("after placement %d: writes: want %d (the first claims ahead on both clusters), got %d", i+1, want, f.puts)
		}
	}
	if got := len(placements(rec)); got != 3 {
		t.Fatalf("placements published: want 3, got %d", got)
	}
	var e ledgerEntry
	if err := events.UnmarshalJSON(f.values["cluster1"], &e); err != nil {
		t.Fatal(err)
	}
	// 16 times the first placement's one replica of 10m and one pod.
	want := map[corev1.ResourceName]int64{corev1.ResourceCPU: 160, corev1.ResourcePods: 16000}
	if diff := cmp.Diff(want, e.Shares["a"].Reserved); diff != "" {
		t.Errorf("a's share of cluster1 as claimed (-want +got):\n%s", diff)
	}
	clk.advance(ledgerFlush)
	if err := h.FlushLedger(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if err := events.UnmarshalJSON(f.values["cluster1"], &e); err != nil {
		t.Fatal(err)
	}
	want = map[corev1.ResourceName]int64{corev1.ResourceCPU: 30, corev1.ResourcePods: 3000}
	if diff := cmp.Diff(want, e.Shares["a"].Reserved); diff != "" {
		t.Errorf("a's share of cluster1 after the flush (-want +got):\n%s", diff)
	}
}
