package core

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// Multi-component workloads (reference features §3): a binding with
// components is never divided. Placed whole into one cluster, sized in
// whole component sets, when its placement asks for exactly that; else
// copied whole to every selected cluster.

// multiTemplate reports whether multi-template scheduling applies
// (isMultiTemplateSchedulingApplicable, §3.2.1): at least one component
// and a spread constraint by cluster with minGroups 1 and maxGroups 1
// (minGroups 0 is 1, as Karmada's webhook defaults it).
func multiTemplate(b *events.Binding, pl *policy.Placement) bool {
	if len(b.Components) == 0 {
		return false
	}
	c, ok := constraint(pl, spreadCluster)
	return ok && c.MinGroups == 1 && c.MaxGroups == 1
}

// setEstimator answers MaxAvailableComponentSets with Karmada's general
// estimator (§3.2.2): how many whole sets of the components fit.
type setEstimator struct {
	pods   int64                     // pods per set: Σ replicas
	demand []framework.ResourceUnits // per set: Σ replicas × request, positive only
}

func newSetEstimator(comps []policy.Component) setEstimator {
	var e setEstimator
	per := map[corev1.ResourceName]int64{}
	var names []corev1.ResourceName
	for _, c := range comps {
		if c.Replicas <= 0 {
			continue // policyd refuses a negative count; nothing to place
		}
		e.pods += int64(c.Replicas)
		if c.ReplicaRequirements == nil {
			continue
		}
		for name, q := range c.ReplicaRequirements.ResourceRequest {
			if v := framework.Units(name, q); v > 0 {
				if _, seen := per[name]; !seen {
					names = append(names, name)
				}
				per[name] = saturatingAdd(per[name], saturatingMul(v, int64(c.Replicas)))
			}
		}
	}
	for _, n := range names {
		e.demand = append(e.demand, framework.ResourceUnits{Name: n, Value: per[n]})
	}
	return e
}

// saturatingMul is a×b for a, b > 0, or math.MaxInt64 where that
// overflows: a set asking for more than int64 holds fits nowhere, where
// the wrapped product could be 0 (a division by it) or negative.
func saturatingMul(a, b int64) int64 {
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// saturatingAdd is a+b for a, b ≥ 0, or math.MaxInt64 where that
// overflows.
func saturatingAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// setsOf is the number of whole sets the cluster can start: 0 without a
// resource summary, free pods ÷ pods per set (the free pods when a set has
// no pods), lowered to free ÷ demand for every requested resource, 0 when
// one is not reported.
func (e *setEstimator) setsOf(c *framework.ClusterInfo) int64 {
	if c.Allocatable == nil {
		return 0
	}
	free, _ := c.Free(corev1.ResourcePods)
	if free <= 0 {
		return 0
	}
	sets := free
	if e.pods > 0 {
		sets = free / e.pods
	}
	for _, d := range e.demand {
		v, ok := c.Free(d.Name)
		if !ok || v <= 0 {
			return 0
		}
		sets = min(sets, v/d.Value)
	}
	return min(sets, math.MaxInt32)
}

// wholeWorkload is the assignment of a binding with components (§3.2.4,
// §3.2.5): every selected cluster gets an entry with 0 replicas, which is
// kept; when multi-template scheduling applies and there are two
// components or more, each entry also carries the components.
func wholeWorkload(b *events.Binding, multi bool, selected []candidate) ([]events.TargetCluster, string) {
	var comps []policy.ComponentReplicas
	if multi && len(b.Components) >= 2 {
		for _, c := range b.Components {
			comps = append(comps, policy.ComponentReplicas{Name: c.Name, Replicas: c.Replicas})
		}
	}
	out := make([]events.TargetCluster, len(selected))
	for i, c := range selected {
		out[i] = events.TargetCluster{Name: c.name(), Components: comps}
	}
	slices.SortFunc(out, func(a, b events.TargetCluster) int { return cmp.Compare(a.Name, b.Name) })
	var pods int64
	for _, c := range b.Components {
		pods += int64(c.Replicas)
	}
	what := strconv.Itoa(len(b.Components)) + " components, " + strconv.FormatInt(pods, 10) + " pods per set"
	if multi {
		return out, "multi-component: the whole workload (" + what + ") in one cluster, sized in whole sets"
	}
	return out, "components without a cluster 1/1 spread constraint: the whole workload (" + what + ") in each of " + strconv.Itoa(len(out)) + " clusters"
}

// keptWhole returns the clusters a Divided binding with components is
// placed in now, when all of them are still feasible and no fresh
// reschedule is asked: such a binding is scheduled again only when its
// placement changes, a cluster of it goes away, or on an explicit
// reschedule, never for a change of its components' replicas (reference
// features §3.2.6). nil otherwise.
func keptWhole(in *Input, req *framework.Request, strategy policy.StrategyKind, cands []candidate) []candidate {
	if len(req.Binding.Components) == 0 || strategy == policy.StrategyDuplicated || len(req.Previous) == 0 || in.Fresh {
		return nil
	}
	var kept []candidate
	for _, c := range cands {
		if _, ok := req.Previous[c.name()]; ok {
			kept = append(kept, c)
		}
	}
	if len(kept) != len(req.Previous) {
		return nil
	}
	return kept
}
