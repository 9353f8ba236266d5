package policyd

import (
	"context"

	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// readPublished reads what policyd has published on FLOTILLA_POLICY and
// folds it into its accepted state (readmodel.ReadPublished says how).
func readPublished(ctx context.Context, bus *natsbus.Bus) (readmodel.Published, error) {
	return readmodel.ReadPublished(ctx, func(ctx context.Context, stream, filter string) ([]readmodel.Stored, error) {
		ms, err := bus.LatestPerSubject(ctx, stream, filter)
		out := make([]readmodel.Stored, 0, len(ms))
		for _, m := range ms {
			out = append(out, readmodel.Stored{Event: m.Event, Sequence: m.Sequence, Time: m.Time, Err: m.Err})
		}
		return out, err
	})
}
