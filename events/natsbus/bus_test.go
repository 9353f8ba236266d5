package natsbus_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

var key = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "my.app"}

func newEvent(t *testing.T, data any) events.Event {
	t.Helper()
	e, err := events.New(events.TypeBindingChanged, "/test", key.String(), data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPublishedEventArrivesWithItsAttributesAndCorrelation(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cause := newEvent(t, map[string]int{"n": 1})
	e := newEvent(t, events.Binding{Key: key, Generation: 3})
	events.CausedBy(&e, cause)
	e.SetExtension("traceparent", "00-abc def-01") // a space must survive percent-encoding
	if err := bus.Publish(ctx, events.BindingSubject(key), e); err != nil {
		t.Fatal(err)
	}
	c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: "test-binding", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings}})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan events.Event, 1)
	go c.Run(ctx, func(_ context.Context, e events.Event) error { got <- e; return nil })
	select {
	case r := <-got:
		var b events.Binding
		if err := events.Decode(r, &b); err != nil || b.Generation != 3 || b.Key != key {
			t.Fatalf("payload = %+v, %v", b, err)
		}
		if r.ID() != e.ID() || r.Subject() != key.String() || events.CausationID(r) != cause.ID() || events.CorrelationID(r) != cause.ID() {
			t.Fatalf("attributes lost: id %s subject %s causation %s", r.ID(), r.Subject(), events.CausationID(r))
		}
		if r.Extensions()["traceparent"] != "00-abc def-01" {
			t.Fatalf("extension = %v", r.Extensions()["traceparent"])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("event not delivered")
	}
}

func TestSameEventIDIsStoredOnce(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	e := newEvent(t, map[string]int{"n": 1})
	for range 3 {
		if err := bus.Publish(ctx, events.BindingSubject(key), e); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := bus.Replay(ctx, events.StreamPolicy, natsbus.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 {
		t.Fatalf("stored %d copies, want 1", len(ms))
	}
}

func TestPoisonEventsAreDeadLetteredAndTheConsumerCarriesOn(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	subj := events.BindingSubject(key)
	// 1: not a CloudEvent at all; 2: a valid event the handler rejects; 3: a handler panic; 4: a good one.
	if err := bus.PublishRaw(ctx, subj, map[string]string{"x": "y"}, []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	bad := newEvent(t, map[string]string{"bad": "yes"})
	panicky := newEvent(t, map[string]string{"panic": "yes"})
	good := newEvent(t, map[string]string{"good": "yes"})
	for _, e := range []events.Event{bad, panicky, good} {
		if err := bus.Publish(ctx, subj, e); err != nil {
			t.Fatal(err)
		}
	}
	c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: "test-poison", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings}})
	if err != nil {
		t.Fatal(err)
	}
	var handledGood atomic.Bool
	go c.Run(ctx, func(_ context.Context, e events.Event) error {
		var m map[string]string
		_ = events.Decode(e, &m)
		switch {
		case m["bad"] == "yes":
			return events.Permanent(errors.New("spec.placement: bad"))
		case m["panic"] == "yes":
			panic("boom")
		}
		handledGood.Store(true)
		return nil
	})
	waitFor(t, "the good event after the poison ones", handledGood.Load)
	var dls []natsbus.Message
	waitFor(t, "three dead letters", func() bool {
		dls, _ = bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
		return len(dls) == 3
	})
	reasons := map[string]bool{}
	for _, m := range dls {
		var dl events.DeadLetter
		if err := events.Decode(m.Event, &dl); err != nil {
			t.Fatal(err)
		}
		if dl.Consumer != "test-poison" || dl.Subject != subj {
			t.Fatalf("dead letter %+v", dl)
		}
		reasons[dl.Reason] = true
	}
	for _, want := range []string{`not a CloudEvent 1.0: ce-specversion is ""`, "spec.placement: bad", "handler panicked: boom"} {
		if !reasons[want] {
			t.Errorf("no dead letter with reason %q; have %v", want, reasons)
		}
	}
}

func TestTransientFailuresAreRetriedThenDeadLettered(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := bus.Publish(ctx, events.BindingSubject(key), newEvent(t, 1)); err != nil {
		t.Fatal(err)
	}
	c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: "test-retry", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings},
		MaxDeliver: 3, BackOff: []time.Duration{10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int32
	go c.Run(ctx, func(context.Context, events.Event) error { attempts.Add(1); return errors.New("member unreachable") })
	waitFor(t, "a dead letter after 3 attempts", func() bool {
		dls, _ := bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
		return len(dls) == 1
	})
	if n := attempts.Load(); n != 3 {
		t.Fatalf("attempts = %d, want 3", n)
	}
}

func TestLatestPerSubjectIsTheCurrentState(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	other := key
	other.Name = "other"
	for i, k := range []events.ObjectKey{key, other, key} {
		if err := bus.Publish(ctx, events.BindingSubject(k), newEvent(t, map[string]int{"i": i})); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllBindings)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("got %d rows, want 2", len(ms))
	}
	var last map[string]int
	_ = events.Decode(ms[1].Event, &last)
	if ms[1].Subject != events.BindingSubject(key) || last["i"] != 2 {
		t.Fatalf("latest for key = %s %v", ms[1].Subject, last)
	}
	empty, err := bus.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements)
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty stream: %v %v", empty, err)
	}
}

func TestSubjectKeyRoundTrips(t *testing.T) {
	for _, k := range []events.ObjectKey{key, {Kind: "Namespace", Name: "team-a"}, {Kind: "Service", Namespace: "default", Name: "web"}} {
		got, err := events.ParseSubjectKey(events.PlacementSubject(k))
		if err != nil || got != k {
			t.Errorf("%v -> %v (%v)", k, got, err)
		}
	}
}

// A message published the moment Subscribe returns is not missed: the
// server already has the consumer (flotilla apply subscribes, then
// publishes and waits for policyd's answer).
func TestSubscribeReturnsOnceTheSubscriptionIsActive(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 20 {
		sctx, stop := context.WithCancel(ctx)
		t.Cleanup(stop)
		sub, err := bus.Subscribe(sctx, events.StreamPolicy, []string{events.BindingSubject(key)}, true)
		if err != nil {
			t.Fatal(err)
		}
		e := newEvent(t, map[string]int{"n": i})
		if err := bus.Publish(ctx, events.BindingSubject(key), e); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			done <- sub.Run(func(m natsbus.Message) {
				select {
				case got <- m.Event.ID():
				default:
				}
			})
		}()
		select {
		case id := <-got:
			if id != e.ID() {
				t.Fatalf("subscription %d: got event %s, want %s", i, id, e.ID())
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("subscription %d: the event published right after Subscribe never arrived", i)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatalf("Run after the context ended: %v", err)
		}
	}
}

// JetStream's ack tells a stored event from one dropped as a duplicate, and
// points at the event stored first under the id, which FetchMessage reads.
func TestPublishAckReportsADuplicateIdAndWhereTheFirstEventIsStored(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	first := newEvent(t, events.Binding{Key: key, Generation: 1})
	again := newEvent(t, events.Binding{Key: key, Generation: 2})
	again.SetID(first.ID())
	a1, err := bus.PublishAck(ctx, events.BindingSubject(key), first)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := bus.PublishAck(ctx, events.BindingSubject(key), again)
	if err != nil {
		t.Fatal(err)
	}
	want := []natsbus.Ack{{Stream: events.StreamPolicy, Sequence: 1}, {Stream: events.StreamPolicy, Sequence: 1, Duplicate: true}}
	if diff := cmp.Diff(want, []natsbus.Ack{a1, a2}); diff != "" {
		t.Fatalf("acks (-want +got):\n%s", diff)
	}
	m, err := bus.FetchMessage(ctx, a2.Stream, a2.Sequence)
	var b events.Binding
	if err != nil || m.Err != nil || events.Decode(m.Event, &b) != nil || b.Generation != 1 || m.Subject != events.BindingSubject(key) {
		t.Fatalf("stored event: %+v (generation %d), %v", m, b.Generation, err)
	}
	if _, err := bus.FetchMessage(ctx, a2.Stream, 99); !errors.Is(err, natsbus.ErrMessageGone) {
		t.Fatalf("fetch of a sequence never stored: want ErrMessageGone, got %v", err)
	}
}

// TestAPoisonEventTooLargeForItsDeadLetterIsDeadLetteredWithoutItsData:
// a 9 MiB event is refused as Permanent before it is sent; a 7 MiB event fits the server's 8 MiB, but not once base64 in a dead
// letter. The dead letter was refused every time and the event lost; now
// the dead letter leaves the data out and says where it is.
func TestAPoisonEventTooLargeForItsDeadLetterIsDeadLetteredWithoutItsData(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// An event over the server's limit is refused before it is sent, as
	// Permanent: no retry could send it.
	if err := bus.Publish(ctx, events.BindingSubject(key), newEvent(t, strings.Repeat("x", 9<<20))); !errors.Is(err, natsbus.ErrTooLarge) || !events.IsPermanent(err) {
		t.Errorf("publishing 9 MiB: %v, want a Permanent ErrTooLarge", err)
	}
	big := strings.Repeat("x", 7<<20)
	if err := bus.Publish(ctx, events.BindingSubject(key), newEvent(t, big)); err != nil {
		t.Fatal(err)
	}
	c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: "test-big", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings}})
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(ctx, func(context.Context, events.Event) error { return events.Permanent(errors.New("refused")) })
	var dl events.DeadLetter
	waitFor(t, "the dead letter", func() bool {
		dls, _ := bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
		return len(dls) == 1 && events.Decode(dls[0].Event, &dl) == nil
	})
	if len(dl.Data) != 0 || !strings.HasPrefix(dl.Reason, "refused (its data, 7340034 bytes, is left out of this dead letter") || dl.Sequence == 0 {
		t.Errorf("dead letter: reason %q, %d bytes of data, sequence %d; want the data left out and said so", dl.Reason, len(dl.Data), dl.Sequence)
	}
}

// TestAnEventWhoseLastDeadLetterFailedComesBack: when the dead letter
// cannot be stored on the last delivery the consumer allows (the
// dead-letter stream is full and refuses new messages here), the event
// is delivered again until it can: the server no longer stops delivering
// it at MaxDeliver, which lost it.
func TestAnEventWhoseLastDeadLetterFailedComesBack(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	js := bus.JetStream()
	st, err := js.Stream(ctx, events.StreamDeadLetter)
	if err != nil {
		t.Fatal(err)
	}
	original := st.CachedInfo().Config
	full := original
	full.MaxMsgs, full.Discard = 1, jetstream.DiscardNew
	if _, err := js.UpdateStream(ctx, full); err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, events.DeadLetterSubject("filler"), newEvent(t, "filler")); err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, events.BindingSubject(key), newEvent(t, 1)); err != nil {
		t.Fatal(err)
	}
	c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: "test-last", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings}, MaxDeliver: 1})
	if err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int32
	go c.Run(ctx, func(context.Context, events.Event) error {
		attempts.Add(1)
		return events.Permanent(errors.New("refused"))
	})
	deadline := time.Now().Add(20 * time.Second)
	for attempts.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := attempts.Load(); n < 2 {
		t.Fatalf("delivered %d time(s) with its dead letter refused; want it delivered again", n)
	}
	if _, err := js.UpdateStream(ctx, original); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if dls, _ := bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{}); len(dls) == 2 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no dead letter once its stream took messages again")
}
