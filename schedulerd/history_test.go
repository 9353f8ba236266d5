package schedulerd

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// historyOutage is a publisher whose failover history subjects fail while
// down is set; everything else is recorded.
type historyOutage struct {
	*eventstest.Recorder
	down     bool
	attempts int // history publishes tried while down
}

func (p *historyOutage) Publish(ctx context.Context, subject string, e events.Event) error {
	if p.down && (events.Type(e.Type()) == events.TypeFailoverEvicted || events.Type(e.Type()) == events.TypeFailoverPurged) {
		p.attempts++
		return errors.New("nats: timeout")
	}
	return p.Recorder.Publish(ctx, subject, e)
}

// The placement that evicts is stored but its history record is not: the
// record is owed and sent on the next tick, once.
func TestAFailoverRecordWhosePublishFailedIsSentOnTheNextTick(t *testing.T) {
	clk := &testClock{t: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	h, rec := newFailoverHandler(t, clk, "cluster1", "cluster2", "cluster3")
	pub := &historyOutage{Recorder: rec, down: true}
	h.pub = pub
	ctx := context.Background()
	if err := h.Handle(ctx, ev(t, events.TypeBindingChanged, weighted(6, 1, map[string]int64{"cluster1": 1, "cluster2": 1, "cluster3": 1}))); err != nil {
		t.Fatal(err)
	}
	added := metav1.NewTime(clk.t)
	health(t, h, clk, "cluster1", "NotReady", corev1.Taint{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added})
	if got := targetsOf(lastPlacement(rec)); got != "cluster2=3,cluster3=3" {
		t.Fatalf("the eviction's placement: %s", got)
	}
	// A second eviction during the outage is owed behind the first without
	// waiting on the bus again (and is stored after it).
	health(t, h, clk, "cluster2", "NotReady", corev1.Taint{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &added})
	if got := targetsOf(lastPlacement(rec)); got != "cluster3=6" {
		t.Fatalf("the second eviction's placement: %s", got)
	}
	if n := len(failoverRecords(rec, events.TypeFailoverEvicted)); n != 0 || pub.attempts != 1 {
		t.Fatalf("%d evicted records stored and %d publishes tried during the outage, want 0 and 1", n, pub.attempts)
	}
	if err := h.Tick(ctx); err == nil {
		t.Fatal("a tick that cannot send an owed record must say so")
	}
	pub.down = false
	tick(t, h)
	tick(t, h)
	rs := failoverRecords(rec, events.TypeFailoverEvicted)
	if len(rs) != 2 || rs[0].Eviction.Cluster != "cluster1" || events.FormatTargets(rs[0].To) != "cluster2=3,cluster3=3" || events.FormatTargets(rs[0].From) != "cluster1=2,cluster2=2,cluster3=2" ||
		rs[1].Eviction.Cluster != "cluster2" || events.FormatTargets(rs[1].To) != "cluster3=6" {
		t.Fatalf("owed records after the outage, in order: %+v", rs)
	}
}

// A schedulerd restarted after its placement with evictions was stored
// but before the history records were sends the missing ones, and only
// those, on its first tick.
func TestARestartedSchedulerdSendsTheFailoverRecordsItsPlacementsImply(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	at := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	purged := at.Add(30 * time.Second)
	evA := events.Eviction{Cluster: "cluster1", Reason: events.EvictTaintUntolerated, PurgeMode: events.PurgeGracefully, EvictedAt: at, PurgedAt: &purged, PurgeReason: "replacement healthy"}
	evB := events.Eviction{Cluster: "cluster2", Reason: events.EvictApplicationFailure, PurgeMode: events.PurgeGracefully, EvictedAt: at}
	// A Directly eviction is purged as it is made, with no purge record.
	evC := events.Eviction{Cluster: "cluster4", Reason: events.EvictTaintUntolerated, PurgeMode: events.PurgeDirectly, EvictedAt: at, PurgedAt: &at, PurgeReason: "Directly"}
	p := events.PlacementDecision{Key: key, Generation: 1, BindingRevision: 1, Scheduled: true, Clusters: []events.TargetCluster{{Name: "cluster3", Replicas: 6}},
		DecidedAt: purged, Evictions: []events.Eviction{evA, evB, evC}}
	pe, err := events.New(events.TypePlacementDecided, "/test", key.String(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, events.PlacementSubject(key), pe); err != nil {
		t.Fatal(err)
	}
	// Only cluster1's eviction record made it before the stop.
	atEvictionA := evA
	atEvictionA.PurgedAt, atEvictionA.PurgeReason = nil, ""
	stored, err := historyEvent("/schedulerd/0", events.TypeFailoverEvicted, events.FailoverRecord{Key: key, Eviction: atEvictionA, At: at})
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, events.FailoverSubject(key), stored); err != nil {
		t.Fatal(err)
	}

	d, err := New(DefaultConfig(), Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.h.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.h.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	ms, err := bus.Replay(ctx, events.StreamPlacement, natsbus.ReplayOptions{Subjects: []string{events.AllFailover}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, m := range ms {
		var r events.FailoverRecord
		if m.Err != nil || events.Decode(m.Event, &r) != nil {
			t.Fatalf("unreadable record: %v", m.Err)
		}
		got[m.Event.Type()+" "+r.Eviction.Cluster]++
	}
	want := map[string]int{
		string(events.TypeFailoverEvicted) + " cluster1": 1, // stored before the stop, not again
		string(events.TypeFailoverPurged) + " cluster1":  1,
		string(events.TypeFailoverEvicted) + " cluster2": 1,
		string(events.TypeFailoverEvicted) + " cluster4": 1,
	}
	if len(got) != len(want) {
		t.Fatalf("failover history after the restart: %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("failover history after the restart: %v, want %v", got, want)
		}
	}
}
