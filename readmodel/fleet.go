package readmodel

import (
	"context"

	"github.com/flotilla-io/flotilla/events"
)

// ReadFleet reads everything the views are computed from with read, one
// filter per read, and joins it: the accepted objects (ReadPublished), the
// placements, the work in every member (Join) and the members with their
// health and capacity (Clusters). `flotilla get` and the web console read
// the fleet through it alike. A cluster's AGE is its Cluster object's
// creation, not its latest registration (a re-join republishes it).
func ReadFleet(ctx context.Context, read LatestReader) (Fleet, error) {
	var f Fleet
	var err error
	if f.Published, err = ReadPublished(ctx, read); err != nil {
		return f, err
	}
	rows := map[string][]Stored{}
	for _, r := range []struct{ stream, filter string }{
		{events.StreamWork, events.AllWork}, {events.StreamPlacement, events.AllPlacements}, {events.StreamPolicy, events.AllMembers},
		{events.StreamHealth, events.AllHealth}, {events.StreamHealth, events.AllCapacity},
	} {
		if rows[r.filter], err = read(ctx, r.stream, r.filter); err != nil {
			return f, err
		}
	}
	f.Decisions = Decisions(rows[events.AllPlacements])
	f.Work = Join(rows[events.AllWork], f.Decisions, rows[events.AllHealth])
	f.Clusters = Clusters(rows[events.AllMembers], append(rows[events.AllHealth], rows[events.AllCapacity]...))
	for i := range f.Clusters {
		c := &f.Clusters[i]
		c.JoinedAt = f.Published.Created(ClusterKey(c.Registration.Name), c.JoinedAt)
	}
	return f, nil
}
