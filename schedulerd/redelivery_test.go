package schedulerd

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// runSchedulerd runs a schedulerd on bus until the returned stop is called.
func runSchedulerd(t *testing.T, bus *natsbus.Bus) func() {
	t.Helper()
	d, err := New(DefaultConfig(), Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	return eventstest.Running(t, d.Run)
}

// publishAt publishes an event of type typ with data on subject and
// returns its stream sequence.
func publishAt(t *testing.T, bus *natsbus.Bus, subject string, typ events.Type, data any) uint64 {
	t.Helper()
	ack, err := bus.PublishAck(context.Background(), subject, ev(t, typ, data))
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

// What a killed schedulerd had taken is delivered again after its AckWait,
// while bindings published meanwhile are handled at once: a binding
// revision redelivered after a newer one of its template was handled
// changes nothing, so the template's placement is the one the newer
// revision leaves (none after a removal), whether the newer was handled by
// the same schedulerd or by one that stopped before the redelivery.
func TestABindingRedeliveredAfterANewerRevisionOfItsTemplateChangesNothing(t *testing.T) {
	changed := func(rev int64, replicas int32) func(*testing.T, *natsbus.Bus) uint64 {
		return func(t *testing.T, bus *natsbus.Bus) uint64 {
			return publishAt(t, bus, events.BindingSubject(key), events.TypeBindingChanged, weighted(replicas, rev, map[string]int64{"cluster1": 1}))
		}
	}
	removed := func(rev int64) func(*testing.T, *natsbus.Bus) uint64 {
		return func(t *testing.T, bus *natsbus.Bus) uint64 {
			return publishAt(t, bus, events.BindingSubject(key), events.TypeBindingRemoved, events.Binding{Key: key, APIVersion: "apps/v1", Generation: rev - 1, Revision: rev})
		}
	}
	for _, c := range []struct {
		name string
		// before is handled in order, first; taken is taken by a killed
		// schedulerd and delivered again after newer was handled.
		before, taken, newer func(*testing.T, *natsbus.Bus) uint64
		// restart: newer is handled by a schedulerd that stops before the
		// redelivery, which the next one handles.
		restart bool
		// want: the revision of the template's latest placement.decided,
		// 0 for none (the placement subject empty or its removal).
		want int64
	}{
		{name: "a binding redelivered after its removal is not placed", taken: changed(1, 2), newer: removed(2)},
		{name: "a binding redelivered after its removal, to a restarted schedulerd, is not placed", taken: changed(1, 2), newer: removed(2), restart: true},
		{name: "a binding redelivered after a newer revision does not overwrite its placement", taken: changed(1, 2), newer: changed(2, 4), want: 2},
		{name: "a binding redelivered after a newer revision, to a restarted schedulerd, does not overwrite its placement", taken: changed(1, 2), newer: changed(2, 4), restart: true, want: 2},
		{name: "a removal redelivered after the template was bound again does not withdraw its placement", before: changed(1, 2), taken: removed(2), newer: changed(3, 4), want: 3},
		{name: "a binding taken by a killed schedulerd and redelivered with nothing newer is placed", taken: changed(1, 2), want: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, bus := eventstest.Server(t)
			spec := Consumers(DefaultConfig())[0]
			seq := publishAt(t, bus, events.MemberSubject("cluster1"), events.TypeClusterRegistered, events.ClusterRegistration{Name: "cluster1", Generation: 1})
			publishAt(t, bus, events.HealthSubject("cluster1"), events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "cluster1", Ready: true, State: "Ready", ObservedAt: time.Now()})
			if c.before != nil {
				seq = c.before(t, bus)
			}
			stop := runSchedulerd(t, bus)
			eventstest.ConsumerSettled(t, bus, spec, seq, 0)
			stop()

			seq = c.taken(t, bus)
			// The newer input must be handled before the taken one comes
			// back: under the whole suite's load, starting the daemon and
			// handling it took more than 2 s once.
			eventstest.TakenByAKilledProcess(t, bus, spec, 1, 5*time.Second)
			stop = runSchedulerd(t, bus)
			if c.newer != nil {
				seq = c.newer(t, bus)
				if c.restart {
					eventstest.ConsumerSettled(t, bus, spec, seq, 1)
					stop()
					stop = runSchedulerd(t, bus)
				}
			}
			eventstest.ConsumerSettled(t, bus, spec, seq, 0)
			stop()

			ms, err := bus.LatestPerSubject(context.Background(), events.StreamPlacement, events.PlacementSubject(key))
			if err != nil {
				t.Fatal(err)
			}
			var got int64
			for _, m := range ms {
				var p events.PlacementDecision
				if events.Type(m.Event.Type()) == events.TypePlacementDecided && events.Decode(m.Event, &p) == nil {
					got = p.BindingRevision
				}
			}
			if got != c.want {
				t.Errorf("the template's placement is of binding revision %d, want %d (0: none)", got, c.want)
			}
		})
	}
}
