package member

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A gated cluster is served only while it is owned: not before, stopped
// when ownership ends (noticed by Moved, or by the poll alone, as when
// leases lapse without a round), served again when it comes back, and
// Serve returns once its context ends.
func TestAGateServesAClusterOnlyWhileItIsOwned(t *testing.T) {
	for _, tc := range []struct {
		name  string
		moved bool // Moved is called after each change
	}{
		{"ownership changes announced by Moved", true},
		{"ownership ending by the clock alone, seen by the poll", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var owned atomic.Bool
			poll := time.Hour
			if !tc.moved {
				poll = 10 * time.Millisecond
			}
			g := NewGate(func(c string) bool { return c == "c1" && owned.Load() }, poll)
			set := func(v bool) {
				owned.Store(v)
				if tc.moved {
					g.Moved()
				}
			}
			var mu sync.Mutex
			var serving bool
			var terms int
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				g.Serve(ctx, "c1", func(ctx context.Context) {
					mu.Lock()
					serving, terms = true, terms+1
					mu.Unlock()
					<-ctx.Done()
					mu.Lock()
					serving = false
					mu.Unlock()
				})
			}()
			state := func() (bool, int) {
				mu.Lock()
				defer mu.Unlock()
				return serving, terms
			}
			await := func(what string, wantServing bool, wantTerms int) {
				t.Helper()
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
					if s, n := state(); s == wantServing && n == wantTerms {
						return
					}
				}
				s, n := state()
				t.Fatalf("%s: serving %v after %d terms, want %v after %d", what, s, n, wantServing, wantTerms)
			}
			time.Sleep(50 * time.Millisecond)
			await("before it is owned", false, 0)
			set(true)
			await("once owned", true, 1)
			set(false)
			await("once lost", false, 1)
			set(true)
			await("owned again", true, 2)
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Serve did not return once its context ended")
			}
			await("after Serve returned", false, 2)
		})
	}
}

// A worker that ends by itself while its cluster is still owned is run
// again RetryAfter later: its instance holds the lease, so nobody else
// would serve the cluster.
func TestAGateRunsAgainAWorkerThatEndedWhileItsClusterIsOwned(t *testing.T) {
	g := NewGate(func(string) bool { return true }, time.Hour)
	var terms atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Serve(ctx, "c1", func(ctx context.Context) {
			if terms.Add(1) > 1 {
				<-ctx.Done()
			}
		})
	}()
	start := time.Now()
	for terms.Load() < 2 && time.Since(start) < 5*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if got := terms.Load(); got != 2 {
		t.Fatalf("run called %d times, want 2: again after it ended by itself", got)
	}
	if took := time.Since(start); took < RetryAfter {
		t.Errorf("run again after %s, want at least %s", took, RetryAfter)
	}
}
