package e2e

import (
	"context"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// The e2e tests check placements, work and dead letters in Flotilla's own
// records, read from the bus through the read model the CLI prints from
// (`get -o json` prints Kubernetes objects, not these records).

// readBus runs read with a connection of its own to the run's bus.
func (s *system) readBus(read func(context.Context, *natsbus.Bus) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bus, err := natsbus.Connect(ctx, s.natsURL, natsbus.Options{Name: "e2e-reader"})
	if err != nil {
		return err
	}
	defer bus.Close()
	return read(ctx, bus)
}

// latestOn reads the latest event of every subject of filters on stream.
func (s *system) latestOn(stream string, filters ...string) ([]readmodel.Stored, error) {
	var ms []natsbus.Message
	err := s.readBus(func(ctx context.Context, bus *natsbus.Bus) (err error) {
		ms, err = bus.LatestPerSubject(ctx, stream, filters...)
		return err
	})
	out := make([]readmodel.Stored, 0, len(ms))
	for _, m := range ms {
		out = append(out, readmodel.Stored{Event: m.Event, Sequence: m.Sequence, Time: m.Time, Err: m.Err})
	}
	return out, err
}

// decisionsIn are the latest placement decisions of the templates of ns
// (every namespace for ""), with their bindings.
func (s *system) decisionsIn(ns string) ([]events.PlacementDecision, error) {
	ms, err := s.latestOn(events.StreamPlacement, events.AllPlacements)
	if err != nil {
		return nil, err
	}
	var out []events.PlacementDecision
	for _, m := range ms {
		var p events.PlacementDecision
		if m.Err == nil && events.Type(m.Event.Type()) == events.TypePlacementDecided && events.Decode(m.Event, &p) == nil && (ns == "" || p.Key.Namespace == ns) {
			out = append(out, p)
		}
	}
	return out, nil
}

// workItemsIn is the joined work of the templates of ns, each item in the
// phase `get work -o json` used to print (readmodel.Join).
func (s *system) workItemsIn(ns string) ([]events.WorkStatus, error) {
	reports, err := s.latestOn(events.StreamWork, events.AllWork)
	if err != nil {
		return nil, err
	}
	ps, err := s.latestOn(events.StreamPlacement, events.AllPlacements)
	if err != nil {
		return nil, err
	}
	health, _ := s.latestOn(events.StreamHealth, events.AllHealth)
	w := readmodel.Join(reports, readmodel.Decisions(ps), health)
	return w.Filter(func(st events.WorkStatus) bool { return st.Key.Namespace == ns }).Items, nil
}

// deadLettersOnBus are the stored dead letters, oldest first.
func (s *system) deadLettersOnBus() ([]events.DeadLetter, error) {
	var ms []natsbus.Message
	err := s.readBus(func(ctx context.Context, bus *natsbus.Bus) (err error) {
		ms, err = bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []events.DeadLetter
	for _, m := range ms {
		var dl events.DeadLetter
		if m.Err == nil && events.Decode(m.Event, &dl) == nil {
			out = append(out, dl)
		}
	}
	return out, nil
}
