package policyd

import (
	"context"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// published is what policyd has published on FLOTILLA_POLICY, folded into
// its accepted state (readmodel.ReadPublished says how), and the input
// sequence of each removal that is an object's latest record: with the
// records' own (ObjectRecord.InputSequence) they are state.inputs.
type published struct {
	readmodel.Published
	removed map[events.ObjectKey]uint64
	// rejected: the input each object's latest stored rejection answers
	// (read by take-overs that load a partition; nil: not read).
	rejected map[events.ObjectKey]string
}

// readRejected reads which input each object's latest rejection answers.
func readRejected(ctx context.Context, bus *natsbus.Bus) (map[events.ObjectKey]string, error) {
	ms, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllRejected)
	if err != nil {
		return nil, err
	}
	out := make(map[events.ObjectKey]string, len(ms))
	for _, m := range ms {
		if k, err := events.ParseSubjectKey(m.Subject); err == nil && m.Err == nil {
			out[k] = events.CausationID(m.Event)
		}
	}
	return out, nil
}

// readPublished reads what policyd has published on FLOTILLA_POLICY.
func readPublished(ctx context.Context, bus *natsbus.Bus) (published, error) {
	p := published{removed: map[events.ObjectKey]uint64{}}
	var err error
	p.Published, err = readmodel.ReadPublished(ctx, func(ctx context.Context, stream, filter string) ([]readmodel.Stored, error) {
		ms, err := bus.LatestPerSubject(ctx, stream, filter)
		out := make([]readmodel.Stored, 0, len(ms))
		for _, m := range ms {
			out = append(out, readmodel.Stored{Event: m.Event, Sequence: m.Sequence, Time: m.Time, Err: m.Err})
			var r events.ObjectRecord
			if m.Err == nil && events.Type(m.Event.Type()) == events.TypeObjectRemoved && events.Decode(m.Event, &r) == nil {
				p.removed[r.Key] = r.InputSequence
			}
		}
		return out, err
	})
	return p, err
}
