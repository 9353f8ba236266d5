package console

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/readmodel"
)

// gatedSource is a Source whose Fleet answers with as many clusters as it
// has been called times, the first call only once the test opens gate.
type gatedSource struct {
	recordedSource
	gate   chan struct{}
	mu     sync.Mutex
	calls  int
	follow func(Event)
}

func (s *gatedSource) Fleet(context.Context) (readmodel.Fleet, error) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	if n == 1 {
		<-s.gate
	}
	return readmodel.Fleet{Clusters: make([]readmodel.Cluster, n)}, nil
}

func (s *gatedSource) DeadLetters(context.Context) ([]readmodel.DeadLetter, error) { return nil, nil }

func (s *gatedSource) Follow(_ context.Context, fn func(Event)) error {
	s.mu.Lock()
	s.follow = fn
	s.mu.Unlock()
	return nil
}

// A read of the fleet that a change overtakes (begun before the change,
// finished after it) is not kept: the refresh the change causes reads the
// fleet again instead of sharing the stale read, which would have hidden
// the change from every open page until the next one.
func TestAReadOvertakenByAChangeIsNotKept(t *testing.T) {
	src := &gatedSource{gate: make(chan struct{})}
	s, err := New(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.settleIn = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx) }()
	stale := make(chan *snapshot, 1)
	go func() { snap, _ := s.read(ctx); stale <- snap }() // a page's read, held in Fleet
	for {
		src.mu.Lock()
		started := src.calls == 1 && src.follow != nil
		follow := src.follow
		src.mu.Unlock()
		if started {
			follow(Event{Stream: "HEALTH", Subject: "flotilla.health.c1"}) // the change, while the read is held
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // Run settles and waits on the held read
	close(src.gate)
	if snap := <-stale; len(snap.fleet.Clusters) != 1 {
		t.Fatalf("the held read returned %d clusters, want its own read's 1", len(snap.fleet.Clusters))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		snap, err := s.read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.fleet.Clusters) == 2 {
			return // read again after the change
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the change the console keeps the read begun before it (%d clusters), want a read made after it", len(snap.fleet.Clusters))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
