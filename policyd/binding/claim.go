package binding

import (
	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Candidate is a propagation policy as Claim takes it: its key (Kind
// PropagationPolicy or ClusterPropagationPolicy) and the decoded object.
type Candidate struct {
	Key    events.ObjectKey
	Policy policy.PropagationPolicy
}

// Claim picks the propagation policy for a template, as Karmada's
// detector does (reference §7): a template already claimed by a policy that
// still matches keeps it (unless a preempting policy of strictly higher
// priority, or a PropagationPolicy over a ClusterPropagationPolicy, asks
// for it); otherwise the namespace's PropagationPolicies are considered
// first and ClusterPropagationPolicies only if none matches; among matches
// the highest explicit priority wins, then the highest implicit priority
// (name > label selector > match-all), then the smallest name. It returns
// nil when no policy matches; the result points into pols.
func Claim(r policy.ResourceFacts, current *events.PolicyRef, pols []Candidate) *Candidate {
	var claimed *Candidate
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

// Selects reports whether the policy's selectors select the template:
// a PropagationPolicy only in its own namespace. A claimed template its
// policy no longer selects is unclaimed (Karmada drops the claim): it
// stays where it was propagated, and nothing places it anew.
func (p *Candidate) Selects(r policy.ResourceFacts) bool { return matches(p, r) }

func matches(p *Candidate, r policy.ResourceFacts) bool {
	if p.Key.Kind == policy.KindPropagationPolicy && p.Key.Namespace != r.Namespace {
		return false
	}
	return policy.SelectorsPriority(p.Policy.Spec.ResourceSelectors, r) > policy.PriorityMisMatch
}

func bestOf(r policy.ResourceFacts, pols []Candidate, kind string) *Candidate {
	var best *Candidate
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

func better(a *Candidate, ai policy.SelectorPriority, b *Candidate, bi policy.SelectorPriority) bool {
	if pa, pb := explicitPriority(a), explicitPriority(b); pa != pb {
		return pa > pb
	}
	if ai != bi {
		return ai > bi
	}
	return a.Key.Name < b.Key.Name
}

func explicitPriority(p *Candidate) int32 {
	if p.Policy.Spec.Priority == nil {
		return 0
	}
	return *p.Policy.Spec.Priority
}

// preempts implements reference §7.1: only with preemption Always; a
// PropagationPolicy takes from a lower-priority PropagationPolicy or from any
// ClusterPropagationPolicy; a ClusterPropagationPolicy only from a
// lower-priority ClusterPropagationPolicy.
func preempts(challenger, holder *Candidate) bool {
	if challenger.Policy.Spec.Preemption != "Always" {
		return false
	}
	if challenger.Key.Kind == policy.KindPropagationPolicy {
		return holder.Key.Kind == policy.KindClusterPropagationPolicy || explicitPriority(challenger) > explicitPriority(holder)
	}
	return holder.Key.Kind == policy.KindClusterPropagationPolicy && explicitPriority(challenger) > explicitPriority(holder)
}
