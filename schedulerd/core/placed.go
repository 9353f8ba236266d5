package core

import (
	"cmp"
	"slices"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// Placed is what one decision may depend on besides its own binding: the
// placements of the workloads decided before it, as workload affinity
// peers (reference features §1) and as usage against FederatedResourceQuotas
// (§4). Decisions that touch it are made one at a time, in queue order
// (QueueOrder); everything else stays independent. schedulerd and simulate
// both decide through Placed.Decide, so the rules are written once. Not
// safe for concurrent use.
type Placed struct {
	// Quotas is the quota ledger.
	Quotas *Ledger
	// groups: (namespace, group) -> member -> its placed clusters.
	affinity, anti map[groupKey]map[events.ObjectKey][]string
	// of: the groups each member is indexed under.
	of map[events.ObjectKey]policy.WorkloadAffinityGroups
}

type groupKey struct{ namespace, group string }

// NewPlaced returns an empty Placed with an empty ledger.
func NewPlaced() *Placed {
	return &Placed{Quotas: NewLedger(), affinity: map[groupKey]map[events.ObjectKey][]string{},
		anti: map[groupKey]map[events.ObjectKey][]string{}, of: map[events.ObjectKey]policy.WorkloadAffinityGroups{}}
}

// Involves reports whether b's decision depends on or changes what other
// decisions see: b has a workload affinity group, or a quota limits its
// namespace.
func (pl *Placed) Involves(b *events.Binding) bool {
	return b.WorkloadAffinityGroups != nil || (b.Key.Namespace != "" && pl.Quotas.Limited(b.Key.Namespace))
}

// Decide is Scheduler.Decide with the binding's peers given, followed by
// quota admission (reference features §4.3, §4.5): a placement that would
// take a quota of the namespace over its limit is refused with
// ReasonQuotaExceeded and Karmada's message in Error, and the template
// keeps its previous clusters (none for a new one). The decision is then
// recorded: the binding's groups list its clusters, and the ledger counts
// its usage.
func (pl *Placed) Decide(s *Scheduler, in DecideInput) events.PlacementDecision {
	b := &in.Binding
	in.Peers = pl.Peers(b.Key, b.WorkloadAffinityGroups)
	p := s.Decide(in)
	if exceeded := pl.Quotas.Admit(b.Key, UsageOf(b, p.Clusters)); exceeded != "" {
		p.Scheduled, p.Error, p.Clusters, p.AffinityName = false, policy.ReasonQuotaExceeded+": "+exceeded, nil, ""
		if in.Previous != nil {
			p.Clusters, p.AffinityName = in.Previous.Clusters, in.Previous.AffinityName
		}
	}
	pl.Index(b.Key, b.WorkloadAffinityGroups, p.Clusters)
	return p
}

// Restore records a placement already made (read back at start-up)
// without deciding or admitting it; set the quotas after.
func (pl *Placed) Restore(b *events.Binding, clusters []events.TargetCluster) {
	pl.Index(b.Key, b.WorkloadAffinityGroups, clusters)
	pl.Quotas.Record(b.Key, UsageOf(b, clusters))
}

// Forget drops a deleted workload: it is nobody's peer any more and its
// usage leaves the quotas.
func (pl *Placed) Forget(key events.ObjectKey) {
	pl.Index(key, nil, nil)
	pl.Quotas.Release(key)
}

// Index records key's groups and placed clusters (nil groups: not in any).
func (pl *Placed) Index(key events.ObjectKey, groups *policy.WorkloadAffinityGroups, clusters []events.TargetCluster) {
	if old, ok := pl.of[key]; ok {
		unindex(pl.affinity, groupKey{key.Namespace, old.AffinityGroup}, key)
		unindex(pl.anti, groupKey{key.Namespace, old.AntiAffinityGroup}, key)
		delete(pl.of, key)
	}
	if groups == nil {
		return
	}
	names := make([]string, 0, len(clusters))
	for _, c := range clusters {
		names = append(names, c.Name)
	}
	pl.of[key] = *groups
	index(pl.affinity, groupKey{key.Namespace, groups.AffinityGroup}, key, names)
	index(pl.anti, groupKey{key.Namespace, groups.AntiAffinityGroup}, key, names)
}

func index(m map[groupKey]map[events.ObjectKey][]string, g groupKey, key events.ObjectKey, clusters []string) {
	if g.group == "" {
		return
	}
	if m[g] == nil {
		m[g] = map[events.ObjectKey][]string{}
	}
	m[g][key] = clusters
}

func unindex(m map[groupKey]map[events.ObjectKey][]string, g groupKey, key events.ObjectKey) {
	if members := m[g]; members != nil {
		delete(members, key)
		if len(members) == 0 {
			delete(m, g)
		}
	}
}

// Peers are the placements of key's peers (reference features §1.3): the
// other members of its groups in its namespace. nil without groups.
func (pl *Placed) Peers(key events.ObjectKey, groups *policy.WorkloadAffinityGroups) *framework.WorkloadPeers {
	if groups == nil {
		return nil
	}
	p := &framework.WorkloadPeers{}
	if groups.AffinityGroup != "" {
		for k, cs := range pl.affinity[groupKey{key.Namespace, groups.AffinityGroup}] {
			if k == key || len(cs) == 0 {
				continue
			}
			if p.AffinityIn == nil {
				p.AffinityIn = map[string]int{}
			}
			p.AffinityPlaced++
			for _, c := range cs {
				p.AffinityIn[c]++
			}
		}
	}
	if groups.AntiAffinityGroup != "" {
		for k, cs := range pl.anti[groupKey{key.Namespace, groups.AntiAffinityGroup}] {
			if k == key {
				continue
			}
			for _, c := range cs {
				if p.AntiAffinityIn == nil {
					p.AntiAffinityIn = map[string]struct{}{}
				}
				p.AntiAffinityIn[c] = struct{}{}
			}
		}
	}
	return p
}

// Queued is one piece of pending work: a binding and when it arrived.
type Queued struct {
	Key      events.ObjectKey
	Priority int32
	// Arrival orders work of equal priority: lower first.
	Arrival uint64
}

// QueueOrder sorts pending work the way Karmada's scheduling queue pops
// it (reference features §2.3 rule 2): schedule priority descending, then
// arrival ascending; the key breaks what is left.
func QueueOrder(q []Queued) {
	slices.SortStableFunc(q, func(a, b Queued) int {
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Arrival, b.Arrival); c != 0 {
			return c
		}
		return cmp.Compare(a.Key.String(), b.Key.String())
	})
}
