package executord

import (
	"fmt"

	"github.com/flotilla-io/flotilla/events"
)

// fate is what a placement means for the template's object in one cluster.
type fate int

const (
	// fateRemove: the template is not placed in the cluster (or its copy
	// there was released): delete the copy Flotilla put there.
	fateRemove fate = iota
	// fateApply: the template is placed in the cluster: apply it.
	fateApply
	// fateKeep: the cluster was evicted and the eviction still keeps the old
	// copy (events.Eviction.Kept): leave the copy as it is, neither applied
	// again nor deleted.
	fateKeep
)

func (f fate) String() string {
	switch f {
	case fateApply:
		return "apply"
	case fateKeep:
		return "keep"
	}
	return "remove"
}

// disposition decides what cluster does with p's template (pure). The
// clusters list is authoritative: a cluster in it applies the template
// with its replicas (an unschedulable decision that keeps the current
// result still lists them). A cluster left out keeps its copy while one of
// its evictions is Kept (not purged, mode not Directly), with the replicas
// it had when evicted; otherwise its copy is removed. why says it in words,
// for the work status and the log.
func disposition(p events.PlacementDecision, cluster string) (f fate, replicas int32, why string) {
	for _, tc := range p.Clusters {
		if tc.Name != cluster {
			continue
		}
		if p.Binding == nil {
			return fateRemove, 0, "the placement carries no binding"
		}
		return fateApply, tc.Replicas, fmt.Sprintf("placed with %d replicas", tc.Replicas)
	}
	var released *events.Eviction
	for i, ev := range p.Evictions {
		if ev.Cluster != cluster {
			continue
		}
		if ev.Kept() {
			return fateKeep, ev.Replicas, keptWhy(ev)
		}
		released = &p.Evictions[i]
	}
	switch {
	case released == nil:
		return fateRemove, 0, "not placed in " + cluster
	case released.PurgeMode == events.PurgeDirectly:
		return fateRemove, 0, fmt.Sprintf("evicted (%s), purgeMode Directly", released.Reason)
	case released.PurgeReason != "":
		return fateRemove, 0, fmt.Sprintf("evicted (%s), purged: %s", released.Reason, released.PurgeReason)
	}
	return fateRemove, 0, fmt.Sprintf("evicted (%s), purged", released.Reason)
}

// keptWhy is the work status message of a kept copy.
func keptWhy(ev events.Eviction) string {
	if ev.PurgeMode == events.PurgeNever {
		return fmt.Sprintf("evicted (%s): kept until the eviction is released (purgeMode Never)", ev.Reason)
	}
	return fmt.Sprintf("evicted (%s): kept until the replacement is healthy or the grace period ends", ev.Reason)
}
