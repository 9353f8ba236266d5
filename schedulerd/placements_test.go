package schedulerd

import (
	"context"
	"errors"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

// flaky fails its first publish of a placement, then records.
type flaky struct {
	eventstest.Recorder
	failed bool
}

func (f *flaky) Publish(ctx context.Context, subject string, e events.Event) error {
	if e.Type() == string(events.TypePlacementDecided) && !f.failed {
		f.failed = true
		return errors.New("nats: timeout")
	}
	return f.Recorder.Publish(ctx, subject, e)
}

func TestABindingWhosePlacementWasNotStoredIsPlacedOnRedelivery(t *testing.T) {
	pub := &flaky{}
	h := NewHandler(pub, "t", core.New(plugins.DefaultProfile()), nil)
	join(t, h, "cluster1", true)
	b := ev(t, events.TypeBindingChanged, weighted(2, 1, map[string]int64{"cluster1": 1}))
	if err := h.Handle(context.Background(), b); err == nil {
		t.Fatal("a failed placement publish must fail the handler (the binding is redelivered)")
	}
	if err := h.Handle(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if ps := placements(&pub.Recorder); len(ps) != 1 || !ps[0].Scheduled || ps[0].BindingRevision != 1 {
		t.Fatalf("after redelivery: %+v", ps)
	}
}

func TestSchedulerdRemembersOnlyWhatLaterDecisionsRead(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	join(t, h, "cluster1", true)
	if err := h.Handle(context.Background(), ev(t, events.TypeBindingChanged, weighted(2, 1, map[string]int64{"cluster1": 1}))); err != nil {
		t.Fatal(err)
	}
	published := placements(rec)[0]
	kept := h.book.placements[key]
	if published.Binding == nil || len(published.Feasible) == 0 || published.Scores == nil {
		t.Fatalf("the published placement lost its explanation: %+v", published)
	}
	if kept.Binding != nil || kept.Feasible != nil || kept.Scores != nil || kept.Diagnosis != nil {
		t.Fatalf("kept the explanation in memory: %+v", kept)
	}
	if !samePlacement(kept, published) || kept.DecidedAt.IsZero() {
		t.Fatalf("kept %+v does not stand for published %+v", kept, published)
	}
}
