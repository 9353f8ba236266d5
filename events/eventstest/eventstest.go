// Package eventstest has test helpers for the bus: a real in-process
// nats-server with JetStream, and a publisher that records what it is given.
package eventstest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// Server starts a real nats-server with JetStream in t's temp dir, creates
// the catalogue's streams, and returns its URL and a connected bus. Both are
// closed when the test ends.
func Server(t testing.TB) (string, *natsbus.Bus) {
	t.Helper()
	srv, err := natsbus.StartEmbedded("127.0.0.1:0", t.TempDir(), nil)
	if err != nil {
		t.Fatalf("embedded nats: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	bus := Connect(t, srv.URL())
	if err := bus.EnsureStreams(context.Background()); err != nil {
		t.Fatalf("streams: %v", err)
	}
	return srv.URL(), bus
}

// SecuredServer starts a real nats-server with JetStream and
// authentication on, trusting a fresh authority made in t's temp dir, and
// returns its URL and that authority, which signs credentials of any grant
// (Authority.UserCredentials). The server stops when the test ends.
func SecuredServer(t testing.TB) (string, *natsbus.Authority) {
	t.Helper()
	dir := t.TempDir()
	auth, err := natsbus.LoadOrCreateAuthority(filepath.Join(dir, "auth"))
	if err != nil {
		t.Fatalf("authority: %v", err)
	}
	srv, err := natsbus.StartEmbedded("127.0.0.1:0", filepath.Join(dir, "jetstream"), auth)
	if err != nil {
		t.Fatalf("embedded nats: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	return srv.URL(), auth
}

// Connect opens a bus connection closed at the end of the test.
func Connect(t testing.TB, url string) *natsbus.Bus {
	t.Helper()
	bus, err := natsbus.Connect(context.Background(), url, natsbus.Options{Name: t.Name()})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(bus.Close)
	return bus
}

// Recorder is an events.Publisher that keeps what it is given.
type Recorder struct {
	mu     sync.Mutex
	Events []Published
}

// Published is one recorded publish.
type Published struct {
	Subject string
	Event   events.Event
}

// Publish records e.
func (r *Recorder) Publish(_ context.Context, subject string, e events.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Events = append(r.Events, Published{subject, e})
	return nil
}

// OfType returns the recorded events of type t.
func (r *Recorder) OfType(t events.Type) []Published {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Published
	for _, p := range r.Events {
		if p.Event.Type() == string(t) {
			out = append(out, p)
		}
	}
	return out
}
