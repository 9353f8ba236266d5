package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/failover"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// The rules around Schedule that turn its Result into the placement a
// binding gets: what the current placement and its evictions feed into
// the scheduler, what an explicit reschedule forgets, and what is kept
// when scheduling fails. schedulerd and simulate both decide through
// Decide, so the two cannot place a template differently.

// DecideInput is everything one placement decision depends on.
type DecideInput struct {
	// Binding is the binding to place (see Input.Binding).
	Binding events.Binding
	// Snapshot is the cluster snapshot (framework.NewSnapshot).
	Snapshot *framework.Snapshot
	// Previous is the binding's current placement; nil before its first
	// decision. Decide reads its Clusters, AffinityName and Evictions.
	Previous *events.PlacementDecision
	// Evictions are the evictions the decision carries; nil: those of
	// Previous. Failover passes the evictions after its verdict.
	Evictions []events.Eviction
	// Fresh: an explicit reschedule newer than Previous is pending
	// (reference §1.1 rule 3, §2.5).
	Fresh bool
	// Now stamps the decision (DecidedAt, in UTC).
	Now time.Time
	// Peers are the placements of the binding's workload affinity peers
	// (Groups.Peers); nil when it has no group.
	Peers *framework.WorkloadPeers
}

// Decide places in.Binding and returns the decision as a placement, all
// but its Binding, which the caller embeds when it publishes it (a copy
// here would cost simulate an allocation per template):
//
//   - The evicted clusters are no candidates, and their replicas are
//     placed again: Schedule sees the previous placement without them
//     (reference §6.4).
//   - A fresh reschedule forgets the evictions failover.Forgotten names
//     (purged, purgeMode Never, and copies held for want of a healthy
//     replacement), so the workload may move back; Schedule divides afresh
//     and restarts clusterAffinities from the first term.
//   - "No cluster fits" (Result.Unfit) is a decision: the placement has no
//     clusters and carries the diagnosis. After any other failure the
//     previous clusters (without the evicted ones) are kept, as Karmada
//     keeps the current result (reference §1.2).
//   - A failed decision keeps the previous clusterAffinities term.
//   - A binding whose schedule priority could not be read (PriorityError:
//     its PriorityClass is missing) is not scheduled: the placement says
//     why and keeps the previous clusters (none for a new template), as
//     Karmada neither creates nor updates such a binding (reference
//     features §2.2).
//   - So is a binding whose interpreter script failed (InterpreterError):
//     Karmada keeps the binding as it was and retries (reference features
//     §7.6.3); nothing falls back to the built-in interpretation.
//
// Decide is pure: the same input gives the same decision. It is safe for
// concurrent use as Schedule is.
func (s *Scheduler) Decide(in DecideInput) events.PlacementDecision {
	last := in.Previous
	evs := in.Evictions
	sin := Input{Binding: in.Binding, Snapshot: in.Snapshot, Fresh: in.Fresh, Peers: in.Peers}
	if last != nil {
		if evs == nil {
			evs = last.Evictions
		}
		sin.Previous, sin.ObservedAffinity = last.Clusters, last.AffinityName
	}
	if in.Fresh {
		evs = slices.DeleteFunc(slices.Clone(evs), failover.Forgotten)
	}
	if len(evs) > 0 {
		sin.Evicted, sin.Previous = evictedNames(evs), withoutEvicted(sin.Previous, evs)
	} else {
		evs = nil
	}
	var res Result
	if e := in.Binding.PriorityError; e != "" {
		res = Result{Error: e}
	} else if e := in.Binding.InterpreterError; e != "" {
		res = Result{Error: e}
	} else {
		res = s.scheduleRecovered(sin)
	}
	b := &in.Binding
	p := events.PlacementDecision{
		Key: b.Key, Generation: b.Generation, BindingRevision: b.Revision, Scheduled: res.Scheduled, Clusters: res.Clusters,
		Strategy: res.Strategy, Feasible: res.Feasible, Diagnosis: res.Diagnosis, Scores: res.Scores, Division: res.Division,
		Error: res.Error, Warnings: res.Warnings, DecidedAt: in.Now.UTC(), Evictions: evs,
	}
	switch {
	case res.Scheduled:
		p.AffinityName = res.AffinityName
	case last != nil:
		p.AffinityName = last.AffinityName
		if !res.Unfit {
			p.Clusters = stillMembers(sin.Previous, in.Snapshot)
		}
	}
	return p
}

// stillMembers is the previous result a failed decision keeps, without
// the clusters that are no members any more (unjoined, their Cluster
// deleted): nothing runs there for Flotilla now, and the placement listed
// them as targets. Without a snapshot (none was given) it is prev.
func stillMembers(prev []events.TargetCluster, snap *framework.Snapshot) []events.TargetCluster {
	if snap == nil {
		return prev
	}
	members := snap.Clusters()
	return slices.DeleteFunc(slices.Clone(prev), func(tc events.TargetCluster) bool {
		_, found := slices.BinarySearchFunc(members, tc.Name, func(c framework.ClusterInfo, name string) int { return strings.Compare(c.Name, name) })
		return !found
	})
}

// scheduleRecovered is Schedule with a panic turned into a failed result,
// which keeps the binding's last placement (Decide) and names the defect
// in its error. A panic would otherwise stop schedulerd where it decides
// outside a consumer (its start-up, the failover tick, a partition taken
// over), and fail every later event that decides the binding again.
func (s *Scheduler) scheduleRecovered(in Input) (res Result) {
	defer func() {
		if r := recover(); r != nil {
			res = Result{Error: fmt.Sprintf("the scheduler failed on this binding (a defect in Flotilla: please report it): %v", r)}
		}
	}()
	return s.Schedule(in)
}

// evictedNames lists the clusters a placement's evictions keep out.
func evictedNames(evs []events.Eviction) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Cluster)
	}
	return out
}

// withoutEvicted is the previous result minus the evicted clusters: their
// replicas are the ones to place again.
func withoutEvicted(prev []events.TargetCluster, evs []events.Eviction) []events.TargetCluster {
	if len(evs) == 0 {
		return prev
	}
	out := make([]events.TargetCluster, 0, len(prev))
	for _, c := range prev {
		if !slices.ContainsFunc(evs, func(e events.Eviction) bool { return e.Cluster == c.Name }) {
			out = append(out, c)
		}
	}
	return out
}

// FollowsClusterChanges reports whether a change of the member clusters
// must decide the binding again (reference §1.1): one not placed yet (last
// nil, or not scheduled), a Duplicated or non-workload one (it goes to
// every fitting cluster), and one placed on a cluster that left (gone).
// Any other keeps its placement until its binding changes.
func FollowsClusterChanges(b *events.Binding, last *events.PlacementDecision, gone func(cluster string) bool) bool {
	if last == nil || !last.Scheduled {
		return true
	}
	if (b.Replicas == 0 && len(b.Components) == 0) || b.Spec == nil || b.Spec.Placement.Strategy() == policy.StrategyDuplicated {
		return true
	}
	return slices.ContainsFunc(last.Clusters, func(tc events.TargetCluster) bool { return gone(tc.Name) })
}
