package policyd

import (
	"context"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// readPublished reads what policyd has published on FLOTILLA_POLICY and
// folds it into its accepted state (readmodel.FoldPublished says how).
func readPublished(ctx context.Context, bus *natsbus.Bus) (readmodel.Published, error) {
	var stored []readmodel.Stored
	for _, f := range readmodel.PublishedSubjects {
		ms, err := bus.LatestPerSubject(ctx, events.StreamPolicy, f)
		if err != nil {
			return readmodel.Published{}, err
		}
		for _, m := range ms {
			stored = append(stored, readmodel.Stored{Event: m.Event, Sequence: m.Sequence, Time: m.Time, Err: m.Err})
		}
	}
	return readmodel.FoldPublished(stored), nil
}
