package healthd

import (
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// Transition is a ClusterHealth as stored on flotilla.health.<cluster>,
// with the time it was published (its event's time).
type Transition struct {
	Health      events.ClusterHealth
	PublishedAt time.Time
}

// Restored is what healthd resumes a cluster from after a restart.
type Restored struct {
	Health events.ClusterHealth
	// Unstored: Health comes from the last snapshot and says what the
	// cluster's last stored transition does not (a transition healthd
	// failed to store, which it does not retry). healthd publishes it
	// again, so the cluster's own subject is right again.
	Unstored bool
}

// LastHealth picks, for every cluster, what a restarted healthd resumes it
// from: its last stored transition, or its entry in the last snapshot (nil:
// none) if that is newer. Newer is a later observedAt. At an equal
// observedAt the snapshot is newer if it was taken after the transition
// was published: a taint the policy adds between two probes, and every
// change of a cluster healthd does not probe, keep observedAt.
func LastHealth(transitions []Transition, snap *events.HealthSnapshot) map[string]Restored {
	out := map[string]Restored{}
	stored := map[string]Transition{}
	for _, t := range transitions {
		stored[t.Health.Cluster] = t
		out[t.Health.Cluster] = Restored{Health: t.Health}
	}
	if snap == nil {
		return out
	}
	for _, h := range snap.Clusters {
		t, ok := stored[h.Cluster]
		if ok && !snapshotNewer(t, h, snap.TakenAt) {
			continue
		}
		out[h.Cluster] = Restored{Health: h, Unstored: !ok || !sameVerdict(t.Health, h)}
	}
	return out
}

func snapshotNewer(t Transition, h events.ClusterHealth, takenAt time.Time) bool {
	switch {
	case h.ObservedAt.After(t.Health.ObservedAt):
		return true
	case h.ObservedAt.Equal(t.Health.ObservedAt):
		return takenAt.After(t.PublishedAt)
	}
	return false
}

// sameVerdict reports whether a and b say the same to a consumer: state,
// reason, since, failingSince and taints with their timeAdded. The last
// probe's time, latency and message may differ.
func sameVerdict(a, b events.ClusterHealth) bool {
	fs := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	}
	return a.State == b.State && a.Ready == b.Ready && a.Reason == b.Reason && a.Since.Equal(b.Since) &&
		fs(a.FailingSince).Equal(fs(b.FailingSince)) && sameTaints(a.Taints, b.Taints)
}
