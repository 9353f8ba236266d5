package main

import (
	"context"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// The edge of the read model: the client verbs read the streams here and
// hand what they read to package readmodel, which computes the views.

// latest reads the latest event of every subject matching filters on stream.
func latest(ctx context.Context, bus *natsbus.Bus, stream string, filters ...string) ([]readmodel.Stored, error) {
	ms, err := bus.LatestPerSubject(ctx, stream, filters...)
	return stored(ms), err
}

func stored(ms []natsbus.Message) []readmodel.Stored {
	out := make([]readmodel.Stored, 0, len(ms))
	for _, m := range ms {
		out = append(out, storedMessage(m))
	}
	return out
}

func storedMessage(m natsbus.Message) readmodel.Stored {
	return readmodel.Stored{Event: m.Event, Sequence: m.Sequence, Time: m.Time, Err: m.Err}
}

// readPublished reads policyd's accepted objects and bindings
// (readmodel.Published says where a template's record lives).
func readPublished(ctx context.Context, bus *natsbus.Bus) (readmodel.Published, error) {
	return readmodel.ReadPublished(ctx, func(ctx context.Context, stream, filter string) ([]readmodel.Stored, error) {
		return latest(ctx, bus, stream, filter)
	})
}

// readWork reads executord's reports, the placements and the clusters'
// health, and joins them.
func readWork(ctx context.Context, bus *natsbus.Bus) ([]events.PlacementDecision, readmodel.Work, error) {
	reports, err := latest(ctx, bus, events.StreamWork, events.AllWork)
	if err != nil {
		return nil, readmodel.Work{}, err
	}
	ps, err := latest(ctx, bus, events.StreamPlacement, events.AllPlacements)
	if err != nil {
		return nil, readmodel.Work{}, err
	}
	// Without health every cluster shows its last report, as before healthd
	// reports: a missing health stream is no reason to fail.
	health, err := latest(ctx, bus, events.StreamHealth, events.AllHealth)
	if err != nil {
		health = nil
	}
	decisions := readmodel.Decisions(ps)
	return decisions, readmodel.Join(reports, decisions, health), nil
}
