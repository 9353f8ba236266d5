package natsbus_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

func consumerInfo(t *testing.T, bus *natsbus.Bus, stream, name string) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := bus.JetStream().Consumer(context.Background(), stream, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestDeferredEffectsAreStoredInOrderAndTheInputAckedAfterThem(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const inputs, perInput = 50, 3
	for i := range inputs {
		if err := bus.Publish(ctx, events.BindingSubject(key), newEvent(t, map[string]int{"i": i})); err != nil {
			t.Fatal(err)
		}
	}
	c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: "test-deferred", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings}})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(ctx, func(ctx context.Context, e events.Event) error {
		var in map[string]int
		_ = events.Decode(e, &in)
		for j := range perInput {
			out := newEvent(t, map[string]int{"i": in["i"], "j": j})
			if err := bus.PublishDeferred(ctx, events.PlacementSubject(key), out); err != nil {
				return err
			}
		}
		return nil
	})
	waitFor(t, "every input acknowledged", func() bool {
		info := consumerInfo(t, bus, events.StreamPolicy, "test-deferred")
		return info.NumPending == 0 && info.NumAckPending == 0 && info.AckFloor.Stream == inputs
	})
	ms, err := bus.Replay(ctx, events.StreamPlacement, natsbus.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != inputs*perInput {
		t.Fatalf("stored %d effects, want %d", len(ms), inputs*perInput)
	}
	for n, m := range ms {
		var got map[string]int
		_ = events.Decode(m.Event, &got)
		if got["i"] != n/perInput || got["j"] != n%perInput {
			t.Fatalf("effect %d is %v: out of order", n, got)
		}
	}
}

func TestAnInputIsNotAckedUntilItsFailedEffectIsStoredByRetrying(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := bus.Publish(ctx, events.BindingSubject(key), newEvent(t, 1)); err != nil {
		t.Fatal(err)
	}
	// The effect goes to a subject no stream stores yet: its publish fails
	// until the stream exists. AckWait is short: the input must be kept
	// from redelivery meanwhile, and its handler called once.
	c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: "test-late", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings}, AckWait: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	effect := newEvent(t, map[string]string{"effect": "yes"})
	var calls atomic.Int32
	go c.Run(ctx, func(ctx context.Context, e events.Event) error {
		calls.Add(1)
		return bus.PublishDeferred(ctx, "late.effect", effect)
	})
	waitFor(t, "the handler", func() bool { return calls.Load() == 1 })
	time.Sleep(2 * time.Second) // the first publish fails (no stream) and is being retried
	if info := consumerInfo(t, bus, events.StreamPolicy, "test-late"); info.NumAckPending != 1 || info.AckFloor.Stream != 0 {
		t.Fatalf("input settled before its effect was stored: ack pending %d, ack floor %d", info.NumAckPending, info.AckFloor.Stream)
	}
	if _, err := bus.JetStream().CreateStream(ctx, jetstream.StreamConfig{Name: "LATE", Subjects: []string{"late.>"}, Duplicates: time.Minute}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the input acknowledged once the effect is stored", func() bool {
		info := consumerInfo(t, bus, events.StreamPolicy, "test-late")
		return info.NumAckPending == 0 && info.AckFloor.Stream == 1
	})
	ms, err := bus.Replay(ctx, "LATE", natsbus.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Event.ID() != effect.ID() {
		t.Fatalf("LATE holds %d messages, want the effect once", len(ms))
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("handler called %d times, want 1 (the input must not be redelivered while its effect is retried)", n)
	}
}

func TestADeferredRejectionIsStoredBeforeTheInputIsDeadLettered(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := bus.Publish(ctx, events.BindingSubject(key), newEvent(t, 1)); err != nil {
		t.Fatal(err)
	}
	c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: "test-reject", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings}})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(ctx, func(ctx context.Context, e events.Event) error {
		out := newEvent(t, events.Rejection{Key: key})
		if err := bus.PublishDeferred(ctx, events.RejectedSubject(key), out); err != nil {
			return err
		}
		return events.Permanent(errors.New("bad object"))
	})
	waitFor(t, "a dead letter", func() bool {
		dls, _ := bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
		return len(dls) == 1
	})
	rej, err := bus.Replay(ctx, events.StreamPolicy, natsbus.ReplayOptions{Subjects: []string{events.AllRejected}})
	if err != nil || len(rej) != 1 {
		t.Fatalf("rejections %d, %v", len(rej), err)
	}
}

func TestPublishDeferredOutsideAConsumerIsPublish(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	e := newEvent(t, 1)
	if err := bus.PublishDeferred(ctx, events.PlacementSubject(key), e); err != nil {
		t.Fatal(err)
	}
	ms, err := bus.Replay(ctx, events.StreamPlacement, natsbus.ReplayOptions{})
	if err != nil || len(ms) != 1 {
		t.Fatalf("stored %d, %v: PublishDeferred outside a handler must return once stored", len(ms), err)
	}
	if err := bus.PublishDeferred(ctx, "nowhere.at.all", e); err == nil {
		t.Fatal("a publish no stream takes must fail outside a handler")
	}
}

func BenchmarkHandlerPublishing(b *testing.B) {
	for _, mode := range []string{"Publish", "PublishDeferred"} {
		b.Run(mode, func(b *testing.B) {
			_, bus := eventstest.Server(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for i := range b.N {
				e, _ := events.New(events.TypeBindingChanged, "/bench", key.String(), map[string]int{"i": i})
				if err := bus.PublishAsync(events.BindingSubject(events.ObjectKey{Kind: "Deployment", Name: fmt.Sprint(i)}), e); err != nil {
					b.Fatal(err)
				}
			}
			if err := bus.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: "bench", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings}})
			if err != nil {
				b.Fatal(err)
			}
			var handled atomic.Int64
			done := make(chan struct{})
			b.ResetTimer()
			go c.Run(ctx, func(ctx context.Context, e events.Event) error {
				for j := range 2 {
					out, _ := events.NewWithID(events.DeterministicID(e.ID(), fmt.Sprint(j)), events.TypePlacementDecided, "/bench", e.Subject(), map[string]int{"j": j})
					var err error
					if mode == "Publish" {
						err = bus.Publish(ctx, events.PlacementSubject(events.ObjectKey{Kind: "Deployment", Name: e.ID()}), out)
					} else {
						err = bus.PublishDeferred(ctx, events.PlacementSubject(events.ObjectKey{Kind: "Deployment", Name: e.ID()}), out)
					}
					if err != nil {
						return err
					}
				}
				if handled.Add(1) == int64(b.N) {
					close(done)
				}
				return nil
			})
			<-done
			for {
				info, err := bus.JetStream().Consumer(ctx, events.StreamPolicy, "bench")
				if err != nil {
					b.Fatal(err)
				}
				if ci, err := info.Info(ctx); err == nil && ci.NumAckPending == 0 && ci.NumPending == 0 {
					break
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}
