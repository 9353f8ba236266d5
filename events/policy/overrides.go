package policy

import "sort"

// Scope says which kind of override policy p is by its Kind: cluster for a
// ClusterOverridePolicy, not for an OverridePolicy; a policy without Kind
// is taken by whether it has a namespace. known is false for any other
// Kind.
func (p *OverridePolicy) Scope() (cluster, known bool) {
	switch p.Kind {
	case KindClusterOverridePolicy:
		return true, true
	case KindOverridePolicy:
		return false, true
	case "":
		return p.Namespace == "", true
	}
	return false, false
}

// Rules returns the rules of p as Karmada applies them: spec.overrideRules,
// or, when there are none, the deprecated spec.targetCluster and
// spec.overriders as one rule (deprecated is then true). executord's
// renderer applies these, and `flotilla simulate` groups clusters by which
// of them match.
func (p *OverridePolicy) Rules() (rules []RuleWithCluster, deprecated bool) {
	if len(p.Spec.OverrideRules) > 0 {
		return p.Spec.OverrideRules, false
	}
	return []RuleWithCluster{{TargetCluster: p.Spec.TargetCluster, Overriders: p.Spec.Overriders}}, true
}

// ApplicableOverrides returns the override policies of all that apply to
// the resource r, in the order Karmada applies them (reference §5.1):
// every matching ClusterOverridePolicy first, then, only for a namespaced
// resource, the matching OverridePolicies of r's namespace; each group
// sorted stably by ascending implicit priority (a policy without resource
// selectors matches all), then by name. Later policies win conflicts.
// Policies of other kinds are left out (Scope).
//
// It is the one place that decides which overrides a template gets and in
// which order: policyd puts its answer in the binding, executord renders
// the binding's list as it is, and `flotilla simulate` does what policyd
// does.
func ApplicableOverrides(r ResourceFacts, all []OverridePolicy) []OverridePolicy {
	type ranked struct {
		p    *OverridePolicy
		prio SelectorPriority
	}
	var cluster, namespaced []ranked
	for i := range all {
		p := &all[i]
		isCluster, known := p.Scope()
		if !known || (!isCluster && (r.Namespace == "" || p.Namespace != r.Namespace)) {
			continue
		}
		prio := PriorityMatchAll
		if len(p.Spec.ResourceSelectors) > 0 {
			prio = SelectorsPriority(p.Spec.ResourceSelectors, r)
		}
		if prio == PriorityMisMatch {
			continue
		}
		if isCluster {
			cluster = append(cluster, ranked{p, prio})
		} else {
			namespaced = append(namespaced, ranked{p, prio})
		}
	}
	var out []OverridePolicy
	for _, g := range [][]ranked{cluster, namespaced} {
		sort.SliceStable(g, func(i, j int) bool {
			if g[i].prio != g[j].prio {
				return g[i].prio < g[j].prio
			}
			return g[i].p.Name < g[j].p.Name
		})
		for _, x := range g {
			out = append(out, *x.p)
		}
	}
	return out
}
