package natsbus_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

var (
	goodKey  = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "good"}
	badKey   = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "bad"}
	otherKey = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "other"}
)

// placed publishes a placement decision of k placed on cluster.
func placed(t *testing.T, bus *natsbus.Bus, k events.ObjectKey, cluster string) {
	t.Helper()
	e, err := events.New(events.TypePlacementDecided, "/test", k.String(), events.PlacementDecision{Key: k, Scheduled: true, Clusters: []events.TargetCluster{{Name: cluster, Replicas: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(context.Background(), events.PlacementSubject(k), e); err != nil {
		t.Fatal(err)
	}
}

// garbage stores a row that is not a CloudEvent on k's placement subject.
func garbage(t *testing.T, bus *natsbus.Bus, k events.ObjectKey) {
	t.Helper()
	if err := bus.PublishRaw(context.Background(), events.PlacementSubject(k), nil, []byte("\x00garbage")); err != nil {
		t.Fatal(err)
	}
}

// row is what a test compares of a message read back.
type row struct {
	Subject    string
	Sequence   uint64
	Cluster    string // of the decision, if it decodes
	Unreadable uint64 // the sequence passed over
	Err        bool
}

func rowsOf(ms []natsbus.Message) []row {
	var out []row
	for _, m := range ms {
		r := row{Subject: m.Subject, Sequence: m.Sequence, Err: m.Err != nil}
		var p events.PlacementDecision
		if m.Err == nil && events.Decode(m.Event, &p) == nil && len(p.Clusters) > 0 {
			r.Cluster = p.Clusters[0].Name
		}
		if m.Unreadable != nil {
			r.Unreadable = m.Unreadable.Sequence
		}
		out = append(out, r)
	}
	return out
}

func TestLatestPerSubjectPassesOverAnUnreadableRowToTheNewestReadableOne(t *testing.T) {
	for _, tt := range []struct {
		name    string
		publish func(t *testing.T, bus *natsbus.Bus)
		want    []row
	}{
		{"garbage after a placement reads as that placement, naming the garbage's sequence", func(t *testing.T, bus *natsbus.Bus) {
			placed(t, bus, goodKey, "cluster1") // 1
			placed(t, bus, badKey, "cluster1")  // 2
			placed(t, bus, badKey, "cluster2")  // 3
			placed(t, bus, otherKey, "cluster3")
			garbage(t, bus, badKey) // 5
			garbage(t, bus, badKey) // 6
		}, []row{
			{Subject: events.PlacementSubject(goodKey), Sequence: 1, Cluster: "cluster1"},
			{Subject: events.PlacementSubject(badKey), Sequence: 3, Cluster: "cluster2", Unreadable: 6},
			{Subject: events.PlacementSubject(otherKey), Sequence: 4, Cluster: "cluster3"},
		}},
		{"a CloudEvent whose JSON data is not JSON is unreadable too", func(t *testing.T, bus *natsbus.Bus) {
			placed(t, bus, badKey, "cluster1")
			h := map[string]string{"ce-specversion": "1.0", "ce-id": "x1", "ce-source": "/test", "ce-type": string(events.TypePlacementDecided), "content-type": "application/json"}
			if err := bus.PublishRaw(context.Background(), events.PlacementSubject(badKey), h, []byte("{not json")); err != nil {
				t.Fatal(err)
			}
		}, []row{{Subject: events.PlacementSubject(badKey), Sequence: 1, Cluster: "cluster1", Unreadable: 2}}},
		{"a subject with no readable row keeps its unreadable one", func(t *testing.T, bus *natsbus.Bus) {
			garbage(t, bus, badKey)
			placed(t, bus, goodKey, "cluster1")
		}, []row{
			{Subject: events.PlacementSubject(badKey), Sequence: 1, Err: true},
			{Subject: events.PlacementSubject(goodKey), Sequence: 2, Cluster: "cluster1"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, bus := eventstest.Server(t)
			tt.publish(t, bus)
			ms, err := bus.LatestPerSubject(context.Background(), events.StreamPlacement, events.AllPlacements)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, rowsOf(ms)); diff != "" {
				t.Errorf("latest per subject (-want +got):\n%s", diff)
			}
		})
	}
}

// deadLetters returns the (stream, sequence) of every stored dead letter.
func deadLetters(t *testing.T, bus *natsbus.Bus) []uint64 {
	t.Helper()
	ms, err := bus.Replay(context.Background(), events.StreamDeadLetter, natsbus.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, m := range ms {
		var dl events.DeadLetter
		if m.Err != nil || events.Decode(m.Event, &dl) != nil {
			t.Fatalf("dead letter %d does not decode", m.Sequence)
		}
		out = append(out, dl.Sequence)
	}
	return out
}

// runUntilSettled runs spec's consumer until it has settled every message
// of its stream.
func runUntilSettled(t *testing.T, bus *natsbus.Bus, spec natsbus.ConsumerSpec) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := bus.Bind(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Run(ctx, func(context.Context, events.Event) error { return nil })
	}()
	waitFor(t, spec.Name+" settled everything", func() bool {
		info, err := bus.JetStream().Consumer(ctx, spec.Stream, spec.Name)
		if err != nil {
			return false
		}
		i := info.CachedInfo()
		return i.NumPending == 0 && i.NumAckPending == 0 && i.Delivered.Consumer > 0
	})
	cancel()
	<-done
}

// An unreadable row is dead-lettered once: not again by a restarted
// consumer, nor by a second consumer meeting it, nor by a consumer created
// after the dead-letter stream's duplicate window has passed.
func TestAnUnreadableRowIsDeadLetteredOnceWhateverConsumersMeetIt(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	// A short duplicate window, so that the last consumer below comes after it.
	s, err := bus.JetStream().Stream(ctx, events.StreamDeadLetter)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.Duplicates = 200 * time.Millisecond
	if _, err := bus.JetStream().UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	placed(t, bus, badKey, "cluster1")
	garbage(t, bus, badKey)
	spec := func(name string) natsbus.ConsumerSpec {
		return natsbus.ConsumerSpec{Name: name, Stream: events.StreamPlacement, Subjects: []string{events.AllPlacements}, StartLastPerSubject: true}
	}
	runUntilSettled(t, bus, spec("executord-cluster1"))
	runUntilSettled(t, bus, spec("executord-cluster1")) // restarted
	runUntilSettled(t, bus, spec("executord-cluster2"))
	time.Sleep(300 * time.Millisecond)
	if err := bus.JetStream().DeleteConsumer(ctx, events.StreamPlacement, "executord-cluster1"); err != nil && err != jetstream.ErrConsumerNotFound {
		t.Fatal(err)
	}
	runUntilSettled(t, bus, spec("executord-cluster1")) // created afresh
	runUntilSettled(t, bus, spec("executord-cluster3"))
	if diff := cmp.Diff([]uint64{2}, deadLetters(t, bus)); diff != "" {
		t.Errorf("dead letters by sequence (-want +got):\n%s", diff)
	}
}
