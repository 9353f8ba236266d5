package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// The edge of the read model: the client verbs read the streams here and
// hand what they read to package readmodel, which computes the views.

// warnings is where reads warn about unreadable rows: the running
// command's standard error (the root command sets it).
var warnings io.Writer = os.Stderr

// latest reads the latest event of every subject matching filters on stream.
// A subject whose latest row is unreadable is read as its newest readable
// row (natsbus.Bus.LatestPerSubject); each such row gets a warning line
// naming the subject and sequence.
func latest(ctx context.Context, bus *natsbus.Bus, stream string, filters ...string) ([]readmodel.Stored, error) {
	ms, err := bus.LatestPerSubject(ctx, stream, filters...)
	warnUnreadable(warnings, ms)
	return stored(ms), err
}

// warnUnreadable prints a warning line for every message of ms that stands
// in for an unreadable row or is one.
func warnUnreadable(w io.Writer, ms []natsbus.Message) {
	for _, m := range ms {
		switch {
		case m.Unreadable != nil:
			fmt.Fprintf(w, "Warning: %s: %s sequence %d is unreadable (%v); showing sequence %d, the newest readable\n",
				m.Subject, m.Stream, m.Unreadable.Sequence, m.Unreadable.Err, m.Sequence)
		case m.Err != nil:
			fmt.Fprintf(w, "Warning: %s: %s sequence %d is unreadable (%v) and nothing readable precedes it; left out\n",
				m.Subject, m.Stream, m.Sequence, m.Err)
		}
	}
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
	return readmodel.ReadPublished(ctx, latestReader(bus))
}

// latestReader reads the latest rows of bus for the read model, warning
// about unreadable ones (latest).
func latestReader(bus *natsbus.Bus) readmodel.LatestReader {
	return func(ctx context.Context, stream, filter string) ([]readmodel.Stored, error) {
		return latest(ctx, bus, stream, filter)
	}
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
