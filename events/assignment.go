package events

import (
	"slices"

	"github.com/flotilla-io/flotilla/events/policy"
)

// AssignmentOf is p as the member cluster c must see it, the data of an
// assignment (TypeWorkAssigned on AssignmentSubject): what c applies, keeps
// or removes, and nothing of other clusters a member could not need:
//   - Clusters holds c's target only (none: c holds no copy);
//   - the explanation of the choice (feasible clusters, scores, diagnosis,
//     the division, warnings) is left out;
//   - the binding's override policies keep only the rules whose
//     targetCluster matches c, judged here on c's labels and fields, and
//     each kept rule targets c by name, so a pull-mode executord that knows
//     only its cluster's name renders what the control plane would; a rule
//     for other clusters keeps its place (its index names it in errors)
//     with no overriders and a target that excludes c;
//   - the propagation spec keeps what executord reads (failover and
//     conflict resolution), not the placement's cluster selection.
//
// Evictions are kept whole: a copy applied after a failover carries the
// evicted copies' preserved state (InjectPreservedLabels), which is what c
// must apply.
func AssignmentOf(p PlacementDecision, c policy.ClusterFacts) PlacementDecision {
	out := PlacementDecision{Key: p.Key, Generation: p.Generation, BindingRevision: p.BindingRevision, Scheduled: p.Scheduled,
		Strategy: p.Strategy, AffinityName: p.AffinityName, Error: p.Error, DecidedAt: p.DecidedAt, Evictions: p.Evictions}
	for _, t := range p.Clusters {
		if t.Name == c.Name {
			out.Clusters = []TargetCluster{t}
		}
	}
	if p.Binding != nil {
		b := *p.Binding
		b.Overrides = overridesFor(b.Overrides, c)
		if b.Spec != nil {
			spec := *b.Spec
			spec.Placement = policy.Placement{Failover: spec.Placement.Failover}
			b.Spec = &spec
		}
		out.Binding = &b
	}
	return out
}

// overridesFor narrows override policies to cluster c (AssignmentOf).
func overridesFor(all []policy.OverridePolicy, c policy.ClusterFacts) []policy.OverridePolicy {
	var out []policy.OverridePolicy
	mine := &policy.ClusterAffinity{ClusterNames: []string{c.Name}}
	notMine := &policy.ClusterAffinity{ExcludeClusters: []string{c.Name}}
	for _, p := range all {
		rules, deprecated := p.Rules()
		narrowed := make([]policy.RuleWithCluster, len(rules))
		matched := false
		for i, r := range rules {
			if r.TargetCluster.Matches(c) {
				narrowed[i], matched = policy.RuleWithCluster{TargetCluster: mine, Overriders: r.Overriders}, true
			} else {
				narrowed[i] = policy.RuleWithCluster{TargetCluster: notMine}
			}
		}
		if !matched {
			continue
		}
		q := p
		q.Spec = policy.OverrideSpec{ResourceSelectors: slices.Clone(p.Spec.ResourceSelectors)}
		if deprecated {
			q.Spec.TargetCluster, q.Spec.Overriders = narrowed[0].TargetCluster, narrowed[0].Overriders
		} else {
			q.Spec.OverrideRules = narrowed
		}
		out = append(out, q)
	}
	return out
}

// AssignedClusters are the clusters an assignment of p goes to: its
// targets and evicted clusters, and those of the placement it replaces
// (last, nil for none), which must hear that they hold the template no
// more; sorted, each once.
func AssignedClusters(p PlacementDecision, last *PlacementDecision) []string {
	var out []string
	for _, d := range []*PlacementDecision{&p, last} {
		if d == nil {
			continue
		}
		for _, t := range d.Clusters {
			out = append(out, t.Name)
		}
		for _, e := range d.Evictions {
			out = append(out, e.Cluster)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// LeftClusters are the clusters of AssignedClusters(p, last) that p keeps
// no copy in (its evictions and what last held), in the same order: nil
// for a placement without evictions that replaces none.
func LeftClusters(p PlacementDecision, last *PlacementDecision) []string {
	if len(p.Evictions) == 0 && last == nil {
		return nil
	}
	var out []string
	for _, c := range AssignedClusters(p, last) {
		if !slices.ContainsFunc(p.Clusters, func(t TargetCluster) bool { return t.Name == c }) {
			out = append(out, c)
		}
	}
	return out
}
