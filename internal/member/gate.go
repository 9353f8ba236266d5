package member

import (
	"context"
	"sync"
	"time"
)

// Gate runs a daemon's per-cluster work only while this instance owns the
// cluster, when several instances of healthd or push-mode executord share
// the members (a lease per cluster, DESIGN.md §7): every instance keeps a
// worker for every registered cluster (the standby's credentials and
// clients are ready), and the Gate lets it act only while its cluster's
// lease is held. The zero of a *Gate, nil, owns every cluster (one
// instance, pull mode, tests).
type Gate struct {
	owns func(cluster string) bool
	poll time.Duration

	mu    sync.Mutex
	moved chan struct{} // closed and replaced by Moved
}

// NewGate gates on owns, which must answer from memory (it is asked every
// poll by every worker). poll bounds how late a worker notices that
// ownership ended without Moved being called: an instance cut off from NATS
// stops owning by the clock, not by a round.
func NewGate(owns func(cluster string) bool, poll time.Duration) *Gate {
	return &Gate{owns: owns, poll: poll, moved: make(chan struct{})}
}

// Moved wakes every worker to look at ownership again: call it after a
// round gained or lost clusters.
func (g *Gate) Moved() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.moved)
	g.moved = make(chan struct{})
}

// Owns reports whether this instance serves cluster now.
func (g *Gate) Owns(cluster string) bool { return g == nil || g.owns(cluster) }

func (g *Gate) wake() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.moved
}

// RetryAfter is how long Serve waits before calling run again when it
// returned by itself while the cluster is still owned: an owner whose
// worker failed would otherwise hold the cluster, renewing its lease,
// while nobody serves it.
const RetryAfter = time.Second

// Serve calls run each time cluster becomes owned, with a context that is
// cancelled as soon as it is not owned any more, and again RetryAfter
// after it returned by itself; it returns when ctx is done (after run has
// returned). A nil Gate calls run once with ctx.
func (g *Gate) Serve(ctx context.Context, cluster string, run func(context.Context)) {
	if g == nil {
		run(ctx)
		return
	}
	for {
		if !g.await(ctx, cluster, true, nil) {
			return
		}
		owned, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			run(owned)
		}()
		g.await(ctx, cluster, false, done)
		stop()
		<-done
		if ctx.Err() == nil && g.owns(cluster) {
			select {
			case <-ctx.Done():
			case <-time.After(RetryAfter):
			}
		}
	}
}

// await waits until g.Owns(cluster) is want, or done is closed; false
// when ctx ended first.
func (g *Gate) await(ctx context.Context, cluster string, want bool, done <-chan struct{}) bool {
	t := time.NewTicker(g.poll)
	defer t.Stop()
	for {
		moved := g.wake()
		if ctx.Err() != nil {
			return false
		}
		if g.owns(cluster) == want {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-done:
			return true
		case <-moved:
		case <-t.C:
		}
	}
}
