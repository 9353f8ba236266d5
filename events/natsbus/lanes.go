package natsbus

import (
	"context"
	"sync"
)

// lanes runs handler calls one lane per key: a key's calls run one at a
// time in the order they were given, and up to n keys run at once. A key is
// a message subject, which names the object the event is about (DESIGN.md
// §3), so per-object order holds whatever n is; with n = 1 every call runs
// in the order given, as if called in line.
type lanes struct {
	slots chan struct{}
	mu    sync.Mutex
	// queued holds the calls waiting behind a key's running call; a key is
	// present while its lane runs.
	queued map[string][]func()
	wg     sync.WaitGroup
}

func newLanes(n int) *lanes {
	return &lanes{slots: make(chan struct{}, max(n, 1)), queued: map[string][]func(){}}
}

// run gives f to key's lane. If the key's lane runs, f waits behind it
// and run returns at once; otherwise run waits for a free lane, and
// returns false without running f if ctx ends first. run is called from
// one goroutine.
func (l *lanes) run(ctx context.Context, key string, f func()) bool {
	if cap(l.slots) == 1 {
		f() // one lane: nothing can queue behind f, so f runs here
		return true
	}
	l.mu.Lock()
	if q, busy := l.queued[key]; busy {
		l.queued[key] = append(q, f)
		l.mu.Unlock()
		return true
	}
	l.mu.Unlock()
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	l.mu.Lock()
	l.queued[key] = nil
	l.mu.Unlock()
	l.wg.Add(1)
	go l.drain(key, f)
	return true
}

// drain runs f, then what queued behind it on key, and frees the lane.
func (l *lanes) drain(key string, f func()) {
	defer l.wg.Done()
	for {
		f()
		l.mu.Lock()
		q := l.queued[key]
		if len(q) == 0 {
			delete(l.queued, key)
			l.mu.Unlock()
			<-l.slots
			return
		}
		f, l.queued[key] = q[0], q[1:]
		l.mu.Unlock()
	}
}

// wait returns once every call given has run.
func (l *lanes) wait() { l.wg.Wait() }
