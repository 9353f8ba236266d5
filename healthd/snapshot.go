package healthd

import (
	"context"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
)

// Snapshot gathers clusters' health into one HealthSnapshot taken at now,
// ordered by cluster name.
func Snapshot(clusters []events.ClusterHealth, now time.Time) events.HealthSnapshot {
	out := make([]events.ClusterHealth, len(clusters))
	copy(out, clusters)
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return events.HealthSnapshot{Clusters: out, TakenAt: now.UTC()}
}

// snapshot is the current health of every member this instance probes
// (all of them when it runs alone; with several instances, each snapshot
// holds its publisher's clusters, and consumers resync those: schedulerd
// leaves a cluster a snapshot does not name as it is). A member registered
// less than one probe ago has told healthd nothing yet and is left out, so
// a snapshot taken just after healthd starts never reports every member
// Unknown.
func (d *Daemon) snapshot(now time.Time) events.HealthSnapshot {
	d.mu.Lock()
	probers := make([]*prober, 0, len(d.probers))
	for name, p := range d.probers {
		if d.gate.Owns(name) {
			probers = append(probers, p)
		}
	}
	d.mu.Unlock()
	hs := make([]events.ClusterHealth, 0, len(probers))
	for _, p := range probers {
		if h, observed := p.health(); observed {
			hs = append(hs, h)
		}
	}
	return Snapshot(hs, now)
}

// publishSnapshots publishes a snapshot every SnapshotInterval until ctx
// is done (never if the interval is 0).
func (d *Daemon) publishSnapshots(ctx context.Context) {
	if d.cfg.SnapshotInterval <= 0 {
		return
	}
	tick := d.deps.Clock.NewTicker(d.cfg.SnapshotInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
		if err := d.publishSnapshot(ctx, d.snapshot(d.now())); err != nil && ctx.Err() == nil {
			d.deps.Log.Warn("publish health snapshot", zap.Error(err))
		}
	}
}

func (d *Daemon) publishSnapshot(ctx context.Context, s events.HealthSnapshot) error {
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	e, err := events.New(events.TypeClusterHealthSnapshot, d.source, "", s)
	if err != nil {
		return err
	}
	if err := d.deps.Bus.Publish(ctx, events.HealthSnapshotSubject, e); err != nil {
		return err
	}
	d.metrics.snapshots.Inc()
	return nil
}
