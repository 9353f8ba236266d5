package natsbus

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// crashAndRecover is a crash of a consumer's process and its restart, on a
// real nats-server: n events wait on distinct subjects; a first consumer
// takes them, its handler stalls on the first (mid-apply), and once the
// server counts every prefetched message as delivered its connection is
// closed at once, nothing acknowledged, nothing drained, as when the
// process is killed. A successor binds the same durable consumer on a new
// connection and handles each event in work. crashAndRecover returns how
// long after the crash the successor had handled every event.
func crashAndRecover(tb testing.TB, spec ConsumerSpec, n int, work time.Duration) time.Duration {
	tb.Helper()
	srv, err := StartEmbedded("127.0.0.1:0", tb.TempDir(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	connect := func() *Bus {
		b, err := Connect(ctx, srv.URL(), Options{Name: tb.Name()})
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	crashed := connect()
	if err := crashed.EnsureStreams(ctx); err != nil {
		tb.Fatal(err)
	}
	spec.Stream, spec.Subjects = events.StreamInput, []string{events.AllInput}
	for i := range n {
		k := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "crash", Name: fmt.Sprintf("app-%04d", i)}
		e, err := events.New(events.TypeObjectApplied, "/test", k.Name, i)
		if err != nil {
			tb.Fatal(err)
		}
		if err := crashed.Publish(ctx, events.InputSubject(k), e); err != nil {
			tb.Fatal(err)
		}
	}
	first, err := crashed.Bind(ctx, spec)
	if err != nil {
		tb.Fatal(err)
	}
	firstCtx, stopFirst := context.WithCancel(ctx)
	go first.Run(firstCtx, func(ctx context.Context, _ events.Event) error {
		<-ctx.Done()
		return ctx.Err()
	})
	taken := min(n, first.spec.Prefetch)
	for {
		info, err := first.c.Info(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		if info.NumAckPending >= taken {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	crashed.nc.Close()
	crashedAt := time.Now()
	stopFirst()

	restarted := connect()
	defer restarted.Close()
	next, err := restarted.Bind(ctx, spec)
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	handled := map[string]bool{}
	all := make(chan struct{})
	go next.Run(ctx, func(_ context.Context, e events.Event) error {
		time.Sleep(work)
		mu.Lock()
		defer mu.Unlock()
		handled[e.ID()] = true
		if len(handled) == n {
			close(all)
		}
		return nil
	})
	select {
	case <-all:
	case <-time.After(3*spec.AckWait + time.Minute):
		tb.Fatalf("%d of %d events handled after the crash", len(handled), n)
	}
	return time.Since(crashedAt)
}

func TestAnAbandonedConsumersMessagesAreHandledByItsSuccessorWithinThreeAckWaits(t *testing.T) {
	const ackWait = 2 * time.Second
	got := crashAndRecover(t, ConsumerSpec{Name: "test-crash", AckWait: ackWait, Prefetch: 16}, 40, time.Millisecond)
	if got > 3*ackWait {
		t.Fatalf("every event handled %s after the crash, want within 3 x AckWait = %s", got.Round(time.Millisecond), 3*ackWait)
	}
}

// BenchmarkRecoveryAfterCrash measures crashAndRecover with today's and
// candidate settings: 300 events, 1 ms each. Run it with -benchtime 1x.
func BenchmarkRecoveryAfterCrash(b *testing.B) {
	for _, c := range []struct {
		ackWait  time.Duration
		prefetch int
	}{
		{time.Minute, 256}, {10 * time.Second, 256}, {10 * time.Second, 64}, {5 * time.Second, 64}, {5 * time.Second, 32},
	} {
		b.Run(fmt.Sprintf("ackwait=%s/prefetch=%d", c.ackWait, c.prefetch), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				total += crashAndRecover(b, ConsumerSpec{Name: "bench-crash", AckWait: c.ackWait, Prefetch: c.prefetch}, 300, time.Millisecond)
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "recovery-s")
		})
	}
}
