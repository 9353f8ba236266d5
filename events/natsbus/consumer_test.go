package natsbus_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// publishOn publishes one event per name, in order, each on the binding
// subject of a Deployment of that name; its data is the name.
func publishOn(t *testing.T, bus *natsbus.Bus, names ...string) {
	t.Helper()
	for _, n := range names {
		k := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: strings.TrimRight(n, "0123456789")}
		if err := bus.Publish(context.Background(), events.BindingSubject(k), newEvent(t, n)); err != nil {
			t.Fatal(err)
		}
	}
}

// bound starts a server, publishes an event per name (see publishOn) and
// binds spec's consumer to the binding subjects; ctx ends with the test.
func bound(t *testing.T, spec natsbus.ConsumerSpec, names ...string) (context.Context, *natsbus.Bus, *natsbus.Consumer) {
	t.Helper()
	_, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	publishOn(t, bus, names...)
	spec.Stream, spec.Subjects = events.StreamPolicy, []string{events.AllBindings}
	c, err := bus.Bind(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, bus, c
}

func dataOf(e events.Event) string {
	var s string
	_ = events.Decode(e, &s)
	return s
}

func TestALongHandlerHoldsBackOnlyItsOwnSubject(t *testing.T) {
	ctx, _, c := bound(t, natsbus.ConsumerSpec{Name: "test-lanes", Concurrency: 4}, "slow1", "slow2", "fast1", "fast2", "fast3")
	release := make(chan struct{})
	var mu sync.Mutex
	var order []string
	go c.Run(ctx, func(ctx context.Context, e events.Event) error {
		if dataOf(e) == "slow1" {
			<-release
		}
		mu.Lock()
		defer mu.Unlock()
		order = append(order, dataOf(e))
		return nil
	})
	handled := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), order...)
	}
	waitFor(t, "the other subject handled while slow1 runs", func() bool { return len(handled()) == 3 })
	if diff := cmp.Diff([]string{"fast1", "fast2", "fast3"}, handled()); diff != "" {
		t.Fatalf("handled while slow1 runs (-want +got):\n%s", diff)
	}
	close(release)
	waitFor(t, "every event handled", func() bool { return len(handled()) == 5 })
	if diff := cmp.Diff([]string{"fast1", "fast2", "fast3", "slow1", "slow2"}, handled()); diff != "" {
		t.Fatalf("handling order (-want +got):\n%s", diff)
	}
}

func TestAHandlerPastItsDeadlineIsCancelledNakdAndHandledAgain(t *testing.T) {
	ctx, bus, c := bound(t, natsbus.ConsumerSpec{Name: "test-deadline", Deadline: 200 * time.Millisecond, BackOff: []time.Duration{100 * time.Millisecond}}, "app1")
	var mu sync.Mutex
	var results []error
	go c.Run(ctx, func(ctx context.Context, e events.Event) error {
		mu.Lock()
		first := len(results) == 0
		mu.Unlock()
		var err error
		if first {
			<-ctx.Done() // a handler that stops when told to
			err = ctx.Err()
		}
		mu.Lock()
		defer mu.Unlock()
		results = append(results, err)
		return err
	})
	waitFor(t, "the event acknowledged", func() bool {
		info := consumerInfo(t, bus, events.StreamPolicy, "test-deadline")
		return info.NumPending == 0 && info.NumAckPending == 0 && info.AckFloor.Stream == 1
	})
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !errors.Is(results[0], context.DeadlineExceeded) || results[1] != nil {
		t.Fatalf("handler results %v, want the deadline passed, then success", results)
	}
}

func TestAHandlerWithinItsDeadlineIsKeptFromRedeliveryByHeartbeats(t *testing.T) {
	ctx, bus, c := bound(t, natsbus.ConsumerSpec{Name: "test-heartbeat", AckWait: 300 * time.Millisecond, Deadline: 5 * time.Second}, "app1")
	var mu sync.Mutex
	calls := 0
	go c.Run(ctx, func(ctx context.Context, e events.Event) error {
		mu.Lock()
		calls++
		mu.Unlock()
		time.Sleep(1500 * time.Millisecond) // five AckWaits
		return nil
	})
	waitFor(t, "the event acknowledged", func() bool {
		return consumerInfo(t, bus, events.StreamPolicy, "test-heartbeat").AckFloor.Stream == 1
	})
	info := consumerInfo(t, bus, events.StreamPolicy, "test-heartbeat")
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 || info.Delivered.Consumer != 1 {
		t.Fatalf("handler called %d times, message delivered %d times; want once", calls, info.Delivered.Consumer)
	}
}

func TestReadyReportsAConsumerStuckOnAHandlerAndRecoversWhenItReturns(t *testing.T) {
	const deadline = 300 * time.Millisecond
	ctx, bus, c := bound(t, natsbus.ConsumerSpec{Name: "test-stuck", Deadline: deadline})
	release := make(chan struct{})
	go c.Run(ctx, func(ctx context.Context, e events.Event) error {
		if dataOf(e) == "app1" {
			<-release // deaf to ctx, like a long computation
		}
		return nil
	})
	waitFor(t, "the consumer running", func() bool { return c.Ready() == nil })
	time.Sleep(2 * deadline)
	if err := c.Ready(); err != nil {
		t.Fatalf("an idle consumer past its deadline: %v, want ready", err)
	}
	publishOn(t, bus, "app1", "other1")
	waitFor(t, "the consumer reported stuck", func() bool { return c.Ready() != nil })
	if err := c.Ready(); !strings.Contains(err.Error(), "consumer test-stuck stuck") || !strings.Contains(err.Error(), "while it holds 1 (the oldest, on flotilla.binding.default.apps.Deployment.app,") {
		t.Fatalf("Ready() = %v, want it to name the consumer and what it holds", err)
	}
	close(release)
	waitFor(t, "the consumer ready again", func() bool { return c.Ready() == nil })
}

func TestBindSetsTheAckWaitOfAConsumerCreatedBefore(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	spec := natsbus.ConsumerSpec{Name: "test-ackwait", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings}, AckWait: time.Minute}
	if _, err := bus.Bind(ctx, spec); err != nil {
		t.Fatal(err)
	}
	spec.AckWait = 0 // the default
	if _, err := bus.Bind(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if got := consumerInfo(t, bus, events.StreamPolicy, "test-ackwait").Config.AckWait; got != natsbus.DefaultAckWait {
		t.Fatalf("AckWait %s after binding again, want the default %s", got, natsbus.DefaultAckWait)
	}
}

// A consumer whose filter was changed behind the daemon's back (a read
// credential may update it), or that an older version created with fewer
// subjects, gets the daemon's filters and MaxDeliver back at the next Bind.
func TestBindSetsBackTheFiltersAndMaxDeliverOfAConsumerChangedSince(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	spec := natsbus.ConsumerSpec{Name: "test-drift", Stream: events.StreamPolicy, Subjects: []string{events.AllBindings, events.AllMembers}}
	if _, err := bus.Bind(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tampered := consumerInfo(t, bus, events.StreamPolicy, "test-drift").Config
	tampered.FilterSubjects, tampered.MaxDeliver = []string{"flotilla.binding.nothing.x.y.z"}, 1
	if _, err := bus.JetStream().UpdateConsumer(ctx, events.StreamPolicy, tampered); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.Bind(ctx, spec); err != nil {
		t.Fatal(err)
	}
	got := consumerInfo(t, bus, events.StreamPolicy, "test-drift").Config
	if diff := cmp.Diff(spec.Subjects, got.FilterSubjects); diff != "" {
		t.Errorf("filters after binding again (-want +got):\n%s", diff)
	}
	if got.MaxDeliver != -1 {
		t.Errorf("MaxDeliver %d after binding again, want the daemon's, unlimited (the consumer dead-letters itself)", got.MaxDeliver)
	}
}

// The handler is told where its event is stored and how often it was
// delivered (events.DeliveryOf): what a handler needs to tell a late
// redelivery from new input.
func TestTheHandlerIsToldTheStreamSequenceAndDeliveryCount(t *testing.T) {
	ctx, bus, c := bound(t, natsbus.ConsumerSpec{Name: "test-delivery", BackOff: []time.Duration{50 * time.Millisecond}}, "first1", "second1")
	var mu sync.Mutex
	var got []events.Delivery
	go c.Run(ctx, func(ctx context.Context, e events.Event) error {
		d, _ := events.DeliveryOf(ctx)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d)
		if dataOf(e) == "second1" && d.Delivered == 1 {
			return errors.New("fail once")
		}
		return nil
	})
	waitFor(t, "both events acknowledged", func() bool {
		return consumerInfo(t, bus, events.StreamPolicy, "test-delivery").AckFloor.Stream == 2
	})
	on := func(name string) string {
		return events.BindingSubject(events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: name})
	}
	want := []events.Delivery{
		{Stream: events.StreamPolicy, Subject: on("first"), Sequence: 1, Delivered: 1},
		{Stream: events.StreamPolicy, Subject: on("second"), Sequence: 2, Delivered: 1},
		{Stream: events.StreamPolicy, Subject: on("second"), Sequence: 2, Delivered: 2},
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("deliveries (-want +got):\n%s", diff)
	}
}
