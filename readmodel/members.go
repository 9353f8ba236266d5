package readmodel

import (
	"fmt"
	"slices"
	"time"

	"github.com/flotilla-io/flotilla/events"

	"github.com/flotilla-io/flotilla/events/policy"
)

// NonMember is a cluster name a policy's placement names that is no
// member: nothing will be placed there ("cluster9 is not a member").
type NonMember struct {
	// Name is the cluster named; Field the field path that names it.
	Name, Field string
}

func (n NonMember) String() string {
	return fmt.Sprintf("%s: %s is not a member: nothing will be placed there", n.Field, n.Name)
}

// NonMembers lists the names spec's placement gives in clusterNames,
// exclude (clusterAffinity, each clusterAffinities term and its overflow)
// and static-weight targets that are not among members, in field order:
// what `apply` warns of and `explain` lists, since a typo there silently
// narrows or widens where a workload runs.
func NonMembers(spec *policy.PropagationSpec, members []string) []NonMember {
	if spec == nil {
		return nil
	}
	var out []NonMember
	check := func(a *policy.ClusterAffinity, field string) {
		if a == nil {
			return
		}
		for i, n := range a.ClusterNames {
			if !slices.Contains(members, n) {
				out = append(out, NonMember{n, fmt.Sprintf("%s.clusterNames[%d]", field, i)})
			}
		}
		for i, n := range a.ExcludeClusters {
			if !slices.Contains(members, n) {
				out = append(out, NonMember{n, fmt.Sprintf("%s.exclude[%d]", field, i)})
			}
		}
	}
	p := spec.Placement
	check(p.ClusterAffinity, "spec.placement.clusterAffinity")
	for i := range p.ClusterAffinities {
		term := &p.ClusterAffinities[i]
		field := fmt.Sprintf("spec.placement.clusterAffinities[%d]", i)
		check(&term.ClusterAffinity, field)
		for j := range term.OverflowAffinities {
			check(&term.OverflowAffinities[j], fmt.Sprintf("%s.overflowAffinities[%d]", field, j))
		}
	}
	if rs := p.ReplicaScheduling; rs != nil && rs.WeightPreference != nil {
		for i := range rs.WeightPreference.StaticWeightList {
			check(&rs.WeightPreference.StaticWeightList[i].TargetCluster, fmt.Sprintf("spec.placement.replicaScheduling.weightPreference.staticWeightList[%d].targetCluster", i))
		}
		for i := range rs.WeightPreference.StaticClusterWeight {
			check(&rs.WeightPreference.StaticClusterWeight[i].TargetCluster, fmt.Sprintf("spec.placement.replicaScheduling.weightPreference.staticClusterWeight[%d].targetCluster", i))
		}
	}
	return out
}

// MemberNames are the members' names.
func MemberNames(cs []Cluster) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Registration.Name)
	}
	return out
}

// ChangedSince says what changed in the fleet after decision p was made,
// so `explain` never shows an old decision as if it were current: every
// member whose health changed state after it (became Ready, was lost, ...),
// and every member that joined after it.
func ChangedSince(p events.PlacementDecision, clusters []Cluster) []string {
	if p.DecidedAt.IsZero() {
		return nil
	}
	var out []string
	for _, c := range clusters {
		if c.JoinedAt.After(p.DecidedAt) {
			out = append(out, fmt.Sprintf("%s joined at %s, after this decision", c.Registration.Name, c.JoinedAt.UTC().Format(time.RFC3339)))
		}
		if h := c.Health; h != nil && h.Since.After(p.DecidedAt) {
			out = append(out, fmt.Sprintf("%s became %s at %s, after this decision", c.Registration.Name, h.State, h.Since.UTC().Format(time.RFC3339)))
		}
	}
	return out
}
