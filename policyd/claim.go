package policyd

import (
	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// candidatePolicy is a propagation policy as the matcher sees it.
type candidatePolicy struct {
	Key    events.ObjectKey // Kind PropagationPolicy or ClusterPropagationPolicy
	Policy policy.PropagationPolicy
}

// ClaimPolicy picks the propagation policy for a template, as Karmada's
// detector does (reference §7): a template already claimed by a policy that
// still matches keeps it (unless a preempting policy of strictly higher
// priority, or a PropagationPolicy over a ClusterPropagationPolicy, asks
// for it); otherwise the namespace's PropagationPolicies are considered
// first and ClusterPropagationPolicies only if none matches; among matches
// the highest explicit priority wins, then the highest implicit priority
// (name > label selector > match-all), then the smallest name.
func ClaimPolicy(r policy.ResourceFacts, current *events.PolicyRef, pols []candidatePolicy) *candidatePolicy {
	var claimed *candidatePolicy
	if current != nil {
		for i := range pols {
			p := &pols[i]
			if p.Key.Kind == current.Kind && p.Key.Namespace == current.Namespace && p.Key.Name == current.Name && matches(p, r) {
				claimed = p
			}
		}
	}
	best := bestOf(r, pols, policy.KindPropagationPolicy)
	if best == nil {
		best = bestOf(r, pols, policy.KindClusterPropagationPolicy)
	}
	if claimed == nil || best == nil || best == claimed {
		if claimed != nil {
			return claimed
		}
		return best
	}
	if preempts(best, claimed) {
		return best
	}
	return claimed
}

func matches(p *candidatePolicy, r policy.ResourceFacts) bool {
	if p.Key.Kind == policy.KindPropagationPolicy && p.Key.Namespace != r.Namespace {
		return false
	}
	return policy.SelectorsPriority(p.Policy.Spec.ResourceSelectors, r) > policy.PriorityMisMatch
}

func bestOf(r policy.ResourceFacts, pols []candidatePolicy, kind string) *candidatePolicy {
	var best *candidatePolicy
	var bestImplicit policy.SelectorPriority
	for i := range pols {
		p := &pols[i]
		if p.Key.Kind != kind || !matches(p, r) {
			continue
		}
		imp := policy.SelectorsPriority(p.Policy.Spec.ResourceSelectors, r)
		if best == nil || better(p, imp, best, bestImplicit) {
			best, bestImplicit = p, imp
		}
	}
	return best
}

func better(a *candidatePolicy, ai policy.SelectorPriority, b *candidatePolicy, bi policy.SelectorPriority) bool {
	if pa, pb := explicitPriority(a), explicitPriority(b); pa != pb {
		return pa > pb
	}
	if ai != bi {
		return ai > bi
	}
	return a.Key.Name < b.Key.Name
}

func explicitPriority(p *candidatePolicy) int32 {
	if p.Policy.Spec.Priority == nil {
		return 0
	}
	return *p.Policy.Spec.Priority
}

// preempts implements reference §7.1: only with preemption Always; a
// PropagationPolicy takes from a lower-priority PropagationPolicy or from any
// ClusterPropagationPolicy; a ClusterPropagationPolicy only from a
// lower-priority ClusterPropagationPolicy.
func preempts(challenger, holder *candidatePolicy) bool {
	if challenger.Policy.Spec.Preemption != "Always" {
		return false
	}
	if challenger.Key.Kind == policy.KindPropagationPolicy {
		return holder.Key.Kind == policy.KindClusterPropagationPolicy || explicitPriority(challenger) > explicitPriority(holder)
	}
	return holder.Key.Kind == policy.KindClusterPropagationPolicy && explicitPriority(challenger) > explicitPriority(holder)
}

// PolicyCandidate is a propagation policy as ClaimPolicy takes it: its key
// (Kind PropagationPolicy or ClusterPropagationPolicy) and the decoded
// object. Exported so that `flotilla simulate` claims templates from plain
// values with exactly policyd's rules.
type PolicyCandidate = candidatePolicy
