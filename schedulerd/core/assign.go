package core

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// assignReplicas divides the binding's replicas over the selected clusters
// (reference §2.2). It returns the placement sorted by name, the one-line
// explanation of the arithmetic, and an error when the binding cannot be
// placed.
func assignReplicas(req *framework.Request, strategy policy.StrategyKind, selected []candidate, in *Input, warnings *[]string, sc *scratch) ([]events.TargetCluster, string, error) {
	if len(selected) == 0 {
		return nil, "", errors.New("no clusters available to schedule")
	}
	if !req.Workload {
		// Non-workloads (ConfigMap, Service, replicas 0 without requests):
		// every selected cluster, with 0 replicas, and the 0s are kept.
		out := make([]events.TargetCluster, len(selected))
		for i, c := range selected {
			out[i] = events.TargetCluster{Name: c.name()}
		}
		slices.SortFunc(out, func(a, b events.TargetCluster) int { return cmp.Compare(a.Name, b.Name) })
		return out, "not a workload: every selected cluster gets 0 replicas", nil
	}
	desired := int64(req.Binding.Replicas)
	desc := tieDescending(req.Binding.UID)
	var (
		parts []party
		line  string
		err   error
	)
	switch strategy {
	case policy.StrategyDuplicated:
		parts = sc.parts[:0]
		for _, c := range selected {
			parts = append(parts, party{name: c.name(), seats: desired, rank: c.rank})
		}
		line = "Duplicated: " + strconv.FormatInt(desired, 10) + " replicas on each of " + strconv.Itoa(len(selected)) + " clusters"
	case policy.StrategyStaticWeight:
		parts, line = divideStatic(req.Placement, selected, desired, desc, warnings, sc, in.Snapshot)
	case policy.StrategyDynamicWeight, policy.StrategyAggregated:
		aggregated := strategy == policy.StrategyAggregated
		if len(req.Affinities) > 1 {
			parts, line, err = divideByTier(aggregated, selected, desired, in, desc)
		} else {
			parts, line, err = divideDynamic(aggregated, selected, desired, in.Previous, in.Fresh, desc, sc)
		}
	case policy.StrategyCostOptimized:
		parts, line, err = divideCostOptimized(req, selected, desired)
	default:
		err = errors.New("replicaDivisionPreference must be Aggregated or Weighted when replicaSchedulingType is Divided")
	}
	if err != nil {
		return nil, line, err
	}
	if cap(parts) > cap(sc.parts) {
		sc.parts = parts // keep the larger buffer
	}
	return targets(parts, sc), line, nil
}

// targets drops zero entries (a workload's 0s are removed, reference §2.2
// rule 4) and sorts by name. Parties that all carry distinct name ranks
// are put in order by rank, without comparing names.
func targets(parts []party, sc *scratch) []events.TargetCluster {
	n := 0
	maxRank := int32(0)
	ranked := true
	for i := range parts {
		p := &parts[i]
		if p.seats > 0 {
			n++
		}
		if p.rank <= 0 {
			ranked = false
		}
		maxRank = max(maxRank, p.rank)
	}
	out := make([]events.TargetCluster, 0, n)
	if ranked && n > 1 {
		// A counting sort by rank; a rank seen twice (the same cluster
		// twice, from a previous result that lists it twice) falls back to
		// the sort by name below.
		at := slices.Grow(sc.at[:0], int(maxRank))[:maxRank]
		for i := range at {
			at[i] = -1
		}
		sc.at = at
		unique := true
		for i := range parts {
			if p := &parts[i]; p.seats > 0 {
				if at[p.rank-1] >= 0 {
					unique = false
					break
				}
				at[p.rank-1] = int32(i)
			}
		}
		if unique {
			for _, i := range at {
				if i >= 0 {
					out = append(out, events.TargetCluster{Name: parts[i].name, Replicas: int32(parts[i].seats)})
				}
			}
			return out
		}
	}
	sorted := true
	for _, p := range parts {
		if p.seats > 0 {
			if len(out) > 0 && p.name < out[len(out)-1].Name {
				sorted = false
			}
			out = append(out, events.TargetCluster{Name: p.name, Replicas: int32(p.seats)})
		}
	}
	if !sorted {
		slices.SortFunc(out, func(a, b events.TargetCluster) int { return cmp.Compare(a.Name, b.Name) })
	}
	return out
}

// staticRules is the static weight list; staticClusterWeight (seed 000's
// spelling) is used when staticWeightList is empty.
func staticRules(wp *policy.ClusterPreferences) []policy.StaticClusterWeight {
	if len(wp.StaticWeightList) > 0 {
		return wp.StaticWeightList
	}
	return wp.StaticClusterWeight
}

// divideStatic is StaticWeight (reference §2.4): each candidate's weight is
// the largest weight among the rules matching it; unmatched candidates are
// left out; if nothing matched, every candidate weighs 1. The previous
// result and capacity play no part.
func divideStatic(pl *policy.Placement, cands []candidate, desired int64, desc bool, warnings *[]string, sc *scratch, snap *framework.Snapshot) ([]party, string) {
	var rules []policy.StaticClusterWeight
	if wp := pl.ReplicaScheduling.WeightPreference; wp != nil {
		rules = staticRules(wp)
		if len(wp.StaticWeightList) == 0 && len(wp.StaticClusterWeight) > 0 {
			*warnings = append(*warnings, "weightPreference.staticClusterWeight is read as staticWeightList")
		}
	}
	weights := staticWeights(pl.ReplicaScheduling.WeightPreference, rules, sc, snap)
	parties := sc.parts[:0]
	for _, c := range cands {
		w := weights.of(c)
		if w > 0 {
			parties = append(parties, party{name: c.name(), weight: w, rank: c.rank})
		}
	}
	basis := "weights"
	if len(parties) == 0 {
		basis = "equal weights"
		for _, c := range cands {
			parties = append(parties, party{name: c.name(), weight: 1, rank: c.rank})
		}
	}
	sc.heap.run(desired, parties, desc)
	return parties, websterLine("", desired, basis, parties)
}

// ruleWeights are the static weight rules, compiled: a cluster weighs the
// largest weight among the rules whose affinity it matches.
type ruleWeights struct {
	rules    []policy.StaticClusterWeight
	matchers []framework.Affinity
	hits     [][]bool // per rule, when bound: by position in the view
	// byPosition: every cluster's weight by position in the snapshot's
	// view, when known for the snapshot's family (nil: per cluster).
	byPosition []int64
}

// staticWeights compiles rules against the view; with a snapshot, every
// cluster's weight is worked out once for its family and prefs (the
// binding's spec, shared and read-only), not per decision.
func staticWeights(prefs *policy.ClusterPreferences, rules []policy.StaticClusterWeight, sc *scratch, snap *framework.Snapshot) *ruleWeights {
	compile := func() *ruleWeights {
		rw := &ruleWeights{rules: rules, matchers: make([]framework.Affinity, len(rules)), hits: make([][]bool, len(rules))}
		for i := range rules {
			rw.matchers[i] = framework.CompileAffinity(&rules[i].TargetCluster)
			snap.Bind(&rw.matchers[i])
			rw.hits[i] = rw.matchers[i].Hits(sc.view)
		}
		return rw
	}
	if snap == nil || prefs == nil {
		return compile()
	}
	return snap.FamilyMemo(prefs, func() any {
		rw := compile()
		byPosition := make([]int64, len(sc.view))
		for at, c := range sc.view {
			byPosition[at] = rw.weigh(c, at)
		}
		return &ruleWeights{byPosition: byPosition}
	}).(*ruleWeights)
}

// of is candidate c's weight.
func (rw *ruleWeights) of(c candidate) int64 {
	if rw.byPosition != nil {
		return rw.byPosition[c.at]
	}
	return rw.weigh(c.c, int(c.at))
}

// weigh is the weight of cluster c at position at in the view.
func (rw *ruleWeights) weigh(c *framework.ClusterInfo, at int) int64 {
	var w int64
	for i := range rw.rules {
		if rw.rules[i].Weight <= w {
			continue
		}
		if h := rw.hits[i]; h != nil && h[at] || h == nil && rw.matchers[i].Matches(c) {
			w = rw.rules[i].Weight
		}
	}
	return w
}

// divideDynamic is DynamicWeight and Aggregated (reference §2.5).
//
// Steady (no explicit reschedule): replicas already placed on candidates
// stay; a scale-up divides only the missing replicas by free capacity and
// adds them; a scale-down divides the new total by the current
// distribution. Fresh: the total is divided by free + current capacity.
// Aggregated first prefers clusters already used, then the largest
// capacities, and keeps the shortest prefix of them that is big enough.
//
// sc, when not nil, lends the weights buffer and the Webster heap.
func divideDynamic(aggregated bool, cands []candidate, desired int64, previous []events.TargetCluster, fresh, desc bool, sc *scratch) ([]party, string, error) {
	name := string(policy.StrategyDynamicWeight)
	if aggregated {
		name = string(policy.StrategyAggregated)
	}
	// scheduled: previous entries still among the candidates, in previous order.
	var scheduled []party
	var assigned int64
	if len(previous) > 0 {
		in := make(map[string]struct{}, len(previous))
		for _, t := range previous {
			in[t.Name] = struct{}{}
		}
		cand := make(map[string]int32, len(previous)) // -> rank
		for _, c := range cands {
			if _, ok := in[c.name()]; ok {
				cand[c.name()] = c.rank
			}
		}
		for _, t := range previous {
			if rank, ok := cand[t.Name]; ok {
				scheduled = append(scheduled, party{name: t.Name, seats: int64(t.Replicas), rank: rank})
				assigned += int64(t.Replicas)
			}
		}
	}

	var (
		target  int64
		weights []party
		mode    string
		basis   string
	)
	var buf []party
	if sc != nil {
		buf = sc.parts[:0]
	}
	switch {
	case fresh:
		mode, basis, target = "fresh", "free+current capacity", desired
		weights = slices.Grow(buf, len(cands))
		for _, c := range cands {
			weights = append(weights, party{name: c.name(), weight: c.avail, rank: c.rank})
		}
		scheduled = nil
	case assigned == desired:
		return scheduled, name + " steady: " + strconv.FormatInt(desired, 10) + " replicas already placed, nothing to divide", nil
	case assigned < desired:
		mode, basis, target = "scale-up", "free capacity", desired-assigned
		weights = slices.Grow(buf, len(cands))
		for _, c := range cands {
			weights = append(weights, party{name: c.name(), weight: c.free, rank: c.rank})
		}
	default:
		mode, basis, target = "scale-down", "current replicas", desired
		weights = slices.Grow(buf, len(scheduled))
		for _, s := range scheduled {
			weights = append(weights, party{name: s.name, weight: s.seats, rank: s.rank})
		}
		scheduled = nil
	}
	// Stable: equal weights keep candidate order (Karmada's insertion sort
	// for up to 12 clusters; beyond that Karmada's order of ties is
	// pdqsort's, which only matters for Aggregated truncation). Without
	// truncation the order of weights taken from the candidates (distinct
	// clusters) changes nothing: Webster's seats follow from a total order
	// on (priority, seats, name). The current replicas of a scale-down may
	// name a cluster twice, and keep the sort.
	if sc == nil {
		sc = new(scratch)
	}
	if aggregated || mode == "scale-down" {
		sortByWeightDesc(weights, &sc.packed, &sc.tmp)
	}
	var sum int64
	for _, w := range weights {
		sum += w.weight
	}
	if sum < target {
		return nil, fmt.Sprintf("%s %s: %d replicas to place, %s sums to %d", name, mode, target, basis, sum),
			fmt.Errorf("Clusters available replicas %d are not enough to schedule.", sum)
	}
	if aggregated {
		used := make(map[string]bool, len(scheduled))
		for _, s := range scheduled {
			if s.seats > 0 {
				used[s.name] = true
			}
		}
		if len(used) > 0 {
			// A stable sort with the used clusters first.
			first := append(sc.tmp[:0], weights...)
			weights = weights[:0]
			for _, w := range first {
				if used[w.name] {
					weights = append(weights, w)
				}
			}
			for _, w := range first {
				if !used[w.name] {
					weights = append(weights, w)
				}
			}
			sc.tmp = first
		}
		var cum int64
		for i, w := range weights {
			cum += w.weight
			if cum >= target {
				weights = weights[:i+1]
				break
			}
		}
	}
	sc.heap.run(target, weights, desc)
	line := websterLine(name+" "+mode+": ", target, basis, weights)
	if len(scheduled) == 0 {
		return weights, line, nil
	}
	// Merge: add the new replicas to what is already placed.
	at := make(map[string]int, len(weights))
	for i, w := range weights {
		at[w.name] = i
	}
	for _, s := range scheduled {
		if i, ok := at[s.name]; ok {
			weights[i].seats += s.seats
		} else {
			weights = append(weights, s)
		}
	}
	return weights, line + ", added to the " + strconv.FormatInt(assigned, 10) + " already placed", nil
}

// divideByTier is the overflow assignment (reference §2.7): tier by tier,
// each tier gets as many replicas as its clusters can take (AvailableReplicas)
// with the normal strategy, until none are left.
func divideByTier(aggregated bool, selected []candidate, desired int64, in *Input, desc bool) ([]party, string, error) {
	var tiers []int
	for _, c := range selected {
		if !slices.Contains(tiers, c.tier) {
			tiers = append(tiers, c.tier)
		}
	}
	slices.Sort(tiers)
	var (
		out   []party
		lines []string
	)
	remaining := desired
	for _, t := range tiers {
		if remaining == 0 {
			break
		}
		var tc []candidate
		var avail int64
		for _, c := range selected {
			if c.tier == t {
				tc = append(tc, c)
				avail += c.avail
			}
		}
		give := min(remaining, avail)
		if give == 0 {
			continue
		}
		parts, line, err := divideDynamic(aggregated, tc, give, in.Previous, in.Fresh, desc, nil)
		lines = append(lines, "tier "+strconv.Itoa(t)+": "+line)
		if err != nil {
			return nil, strings.Join(lines, "; "), err
		}
		out = append(out, parts...)
		remaining -= give
	}
	if remaining > 0 {
		return nil, strings.Join(lines, "; "), errors.New("Clusters available replicas are not enough to schedule.")
	}
	return out, strings.Join(lines, "; "), nil
}

// websterLine explains one Webster division, e.g.
// "Webster 6 by weights cluster1=3 cluster2=2 cluster3=1 -> 3/2/1".
// Beyond 12 parties it summarises.
func websterLine(prefix string, n int64, basis string, parts []party) string {
	var sb strings.Builder
	sb.WriteString(prefix)
	sb.WriteString("Webster ")
	sb.WriteString(strconv.FormatInt(n, 10))
	sb.WriteString(" by ")
	sb.WriteString(basis)
	if len(parts) > 12 {
		var won int
		for _, p := range parts {
			if p.seats > 0 {
				won++
			}
		}
		sb.WriteString(" over ")
		sb.WriteString(strconv.Itoa(len(parts)))
		sb.WriteString(" clusters -> ")
		sb.WriteString(strconv.Itoa(won))
		sb.WriteString(" clusters got replicas")
		return sb.String()
	}
	byName := slices.Clone(parts)
	slices.SortFunc(byName, func(a, b party) int { return cmp.Compare(a.name, b.name) })
	for _, p := range byName {
		sb.WriteByte(' ')
		sb.WriteString(p.name)
		sb.WriteByte('=')
		sb.WriteString(strconv.FormatInt(p.weight, 10))
	}
	sb.WriteString(" ->")
	for i, p := range byName {
		if i == 0 {
			sb.WriteByte(' ')
		} else {
			sb.WriteByte('/')
		}
		sb.WriteString(strconv.FormatInt(p.seats, 10))
	}
	return sb.String()
}
