package framework

import (
	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Request is the per-call input every plugin sees: one binding being
// scheduled against one snapshot. The scheduler core builds it once per
// Schedule call (once per clusterAffinities term tried); plugins read it and
// may cache per-call work in it with SetState. A Request is not safe for
// concurrent use; plugins themselves are shared and must be stateless.
type Request struct {
	Binding *events.Binding
	// Snapshot is the decision's clusters when it runs on a Snapshot
	// (nil otherwise): Prepare may look at the clusters as a whole, e.g.
	// to skip a plugin no cluster gives anything to.
	Snapshot *Snapshot
	// Placement is the binding's placement (the zero Placement when the
	// binding has no spec); never nil.
	Placement *policy.Placement
	// Workload: replicas > 0 or replica requirements present (reference §1.1).
	Workload bool
	// AffinityName is the clusterAffinities term in force ("" with
	// clusterAffinity or no affinity at all).
	AffinityName string
	// Affinities is the cluster affinity in force, prepared: index 0 is the
	// primary affinity (placement.clusterAffinity or the observed term),
	// the rest are that term's overflow affinities in order. Empty: every
	// cluster passes (reference §3.1).
	Affinities []Affinity
	// Previous is the binding's current result: cluster -> replicas.
	Previous map[string]int32
	// Evicted holds the clusters with graceful eviction tasks for this binding.
	Evicted map[string]struct{}
	// Peers are the placements of the binding's workload affinity and
	// anti-affinity peers; nil when it has no group.
	Peers *WorkloadPeers

	state []stateEntry
}

type stateEntry struct {
	key   string
	value any
}

// InPrevious reports whether the cluster is in the binding's current result.
func (r *Request) InPrevious(cluster string) bool {
	_, ok := r.Previous[cluster]
	return ok
}

// IsEvicted reports whether the cluster has a graceful eviction task.
func (r *Request) IsEvicted(cluster string) bool {
	_, ok := r.Evicted[cluster]
	return ok
}

// Tier is the overflow tier of a cluster (reference §2.7): 0 when it matches
// the primary affinity (or there is none), 1+i for the first overflow
// affinity i it matches, 1000 when it matches none. Non-workloads have only
// the primary group.
func (r *Request) Tier(c *ClusterInfo) int {
	if len(r.Affinities) == 0 || r.Affinities[0].Matches(c) {
		return 0
	}
	if !r.Workload {
		return 1000
	}
	for i := 1; i < len(r.Affinities); i++ {
		if r.Affinities[i].Matches(c) {
			return i
		}
	}
	return 1000
}

// SetState stores per-call data under key (by convention the plugin name),
// typically from a PreparePlugin.
func (r *Request) SetState(key string, v any) {
	for i := range r.state {
		if r.state[i].key == key {
			r.state[i].value = v
			return
		}
	}
	r.state = append(r.state, stateEntry{key, v})
}

// State returns what SetState stored under key, or nil.
func (r *Request) State(key string) any {
	for i := range r.state {
		if r.state[i].key == key {
			return r.state[i].value
		}
	}
	return nil
}
