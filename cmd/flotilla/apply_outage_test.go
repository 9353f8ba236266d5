package main

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// An object apply publishes while NATS is down for longer than one publish
// attempt (as while `flotilla up` restarts after a crash) is published
// again and stored once NATS is back, and apply says it is retrying;
// before, apply stopped there and left it and every object after it
// unpublished.
func TestApplyPublishesAnObjectAgainUntilARestartedNATSStoresIt(t *testing.T) {
	dir := t.TempDir()
	srv, err := natsbus.StartEmbedded("127.0.0.1:0", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	bus := eventstest.Connect(t, srv.URL())
	if err := bus.EnsureStreams(context.Background()); err != nil {
		t.Fatal(err)
	}
	k := events.KeyOf("apps/v1", "Deployment", "shop", "web")
	e, err := events.New(events.TypeObjectApplied, cliSource, k.String(), map[string]any{"kind": "Deployment"})
	if err != nil {
		t.Fatal(err)
	}
	srv.Shutdown()
	down := publishAttempt + time.Second
	restarted := make(chan *natsbus.Embedded, 1)
	go func() {
		time.Sleep(down)
		s, err := natsbus.StartEmbedded(u.Host, dir, nil)
		if err != nil {
			t.Error(err)
		}
		restarted <- s
	}()
	var errw bytes.Buffer
	start := time.Now()
	err = publishStored(context.Background(), &errw, bus, outgoing{events.InputSubject(k), e, k, "deployment.apps/web", verbCreated}, 20*time.Second)
	if s := <-restarted; s != nil {
		t.Cleanup(s.Shutdown)
	}
	if err != nil {
		t.Fatalf("publish through an outage of %s: %v\nstderr: %s", down, err, errw.String())
	}
	if took := time.Since(start); took < down {
		t.Errorf("stored after %s, while NATS was down for %s", took, down)
	}
	if want := "deployment.apps/web: NATS did not acknowledge it"; !strings.Contains(errw.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errw.String())
	}
	stored, err := bus.LatestPerSubject(context.Background(), events.StreamInput, events.InputSubject(k))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, m := range stored {
		ids = append(ids, m.Event.ID())
	}
	if diff := cmp.Diff([]string{e.ID()}, ids); diff != "" {
		t.Errorf("stored events (-want +got): %s", diff)
	}
}
