package natsbus_test

import (
	"context"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestARestrictedWatchGoesOnAfterItsConsumerIsLost: a reader's watch runs
// on a consumer of its own name, not an ordered one; when that consumer
// goes (its server lost, or deleted) the watch makes it again after the
// last message it handed on, and misses nothing.
func TestARestrictedWatchGoesOnAfterItsConsumerIsLost(t *testing.T) {
	url, admin := securedServer(t)
	reader := connect(t, url, issue(t, admin, "reader", "dash"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	publish := func(name string) {
		k := key
		k.Name = name
		e, err := events.New(events.TypePlacementDecided, "/test", k.String(), events.PlacementDecision{Key: k})
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Publish(ctx, events.PlacementSubject(k), e); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := reader.Subscribe(ctx, events.StreamPlacement, []string{events.AllPlacements}, true)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 8)
	go func() { _ = sub.Run(func(m natsbus.Message) { seen <- m.Subject }) }()
	next := func(want string) {
		t.Helper()
		select {
		case got := <-seen:
			if got != want {
				t.Fatalf("watch saw %s, want %s", got, want)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("watch saw nothing within 15s, want %s", want)
		}
	}
	publish("first")
	next(events.PlacementSubject(events.ObjectKey{Group: key.Group, Kind: key.Kind, Namespace: key.Namespace, Name: "first"}))
	st, err := admin.JetStream().Stream(ctx, events.StreamPlacement)
	if err != nil {
		t.Fatal(err)
	}
	deleted := 0
	for name := range st.ConsumerNames(ctx).Name() {
		if err := st.DeleteConsumer(ctx, name); err != nil {
			t.Fatal(err)
		}
		deleted++
	}
	if deleted != 1 {
		t.Fatalf("deleted %d consumers, want the watch's one", deleted)
	}
	publish("second")
	next(events.PlacementSubject(events.ObjectKey{Group: key.Group, Kind: key.Kind, Namespace: key.Namespace, Name: "second"}))
	select {
	case err := <-reader.Refused():
		t.Errorf("refused: %v", err)
	default:
	}
}
