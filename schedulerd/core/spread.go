package core

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// Spread fields.
const (
	spreadCluster  = "cluster"
	spreadRegion   = "region"
	spreadZone     = "zone"
	spreadProvider = "provider"
)

// selectClusters chooses the clusters replicas are assigned to from the
// ordered candidates, applying the spread constraints (reference §4.2-4.6).
// multi: multi-template scheduling applies, and the one cluster selected
// must hold one whole component set (reference features §3.2.3).
func selectClusters(req *framework.Request, strategy policy.StrategyKind, multi bool, cands []candidate, warnings *[]string) ([]candidate, error) {
	pl := req.Placement
	if len(pl.SpreadConstraints) == 0 {
		return cands, nil
	}
	if staticForSpread(pl) {
		*warnings = append(*warnings, "spreadConstraints are ignored with static weights (as in Karmada)")
		return cands, nil
	}
	var need int64 // Duplicated: capacity is ignored
	if strategy != policy.StrategyDuplicated {
		need = int64(req.Binding.Replicas)
		if multi {
			need = 1
		}
	}
	region, hasRegion := constraint(pl, spreadRegion)
	cluster, hasCluster := constraint(pl, spreadCluster)
	switch {
	case hasRegion:
		return selectByRegion(cands, region, cluster, hasCluster, strategy == policy.StrategyDuplicated, int64(req.Binding.Replicas))
	case hasCluster:
		return selectByCluster(cands, cluster, need)
	}
	return nil, errors.New("just support cluster and region spread constraint")
}

// staticForSpread reports whether the placement is static weighting as
// Karmada's SelectBestClusters sees it: Divided + Weighted with no
// weightPreference, or a non-empty static list and no dynamic weight. A
// weightPreference with an empty list is not (reference §4.2 corner case).
// staticClusterWeight (the seed-000 spelling) counts as the static list.
func staticForSpread(pl *policy.Placement) bool {
	rs := pl.ReplicaScheduling
	if rs == nil || rs.ReplicaSchedulingType != policy.ReplicaSchedulingTypeDivided ||
		rs.ReplicaDivisionPreference != policy.DivisionPreferenceWeighted {
		return false
	}
	wp := rs.WeightPreference
	return wp == nil || (len(staticRules(wp)) > 0 && wp.DynamicWeight == "")
}

// constraint returns the constraint spreading by field, with minGroups 0
// defaulted to 1 as Karmada's webhook does (reference §4.7); maxGroups has
// no default.
func constraint(pl *policy.Placement, field string) (policy.SpreadConstraint, bool) {
	for _, sc := range pl.SpreadConstraints {
		f := sc.SpreadByField
		if f == "" && sc.SpreadByLabel == "" {
			f = spreadCluster // webhook default
		}
		if f == field {
			if sc.MinGroups == 0 {
				sc.MinGroups = 1
			}
			return sc, true
		}
	}
	return policy.SpreadConstraint{}, false
}

// selectByCluster picks up to maxGroups clusters in candidate order and,
// when they lack the capacity needed, swaps picks from the last one
// backwards for the roomiest unpicked cluster that has strictly more room
// (reference §4.3).
func selectByCluster(cands []candidate, sc policy.SpreadConstraint, need int64) ([]candidate, error) {
	if len(cands) < sc.MinGroups {
		return nil, errors.New("the number of feasible clusters is less than spreadConstraint.MinGroups")
	}
	n := min(len(cands), sc.MaxGroups)
	picks := slices.Clone(cands[:n])
	if need <= 0 {
		return picks, nil
	}
	rest := slices.Clone(cands[n:])
	var sum int64
	for _, c := range picks {
		sum += c.avail
	}
	for i := n - 1; i >= 0 && sum < need; i-- {
		best := -1
		for j := range rest {
			if rest[j].avail > picks[i].avail && (best < 0 || rest[j].avail > rest[best].avail) {
				best = j
			}
		}
		if best < 0 {
			continue
		}
		sum += rest[best].avail - picks[i].avail
		picks[i], rest[best] = rest[best], picks[i]
	}
	if sum < need {
		return nil, fmt.Errorf("no enough resource when selecting %d clusters", n)
	}
	return picks, nil
}

// group is a region (or other topology group) of candidates.
type group struct {
	name     string
	clusters []candidate // in candidate order
	value    int64       // the number of clusters
	score    int64
}

// selectByRegion chooses regions with the group search, takes the best
// cluster of each, then fills up to the cluster constraint's maxGroups from
// the other clusters of the chosen regions (reference §4.4). Capacity is
// not checked here.
//
// Flotilla relaxation (seed 004): a region constraint without a cluster
// constraint is allowed; the cluster count is then limited only by the
// chosen regions (cluster minGroups 1, no maxGroups).
func selectByRegion(cands []candidate, region, cluster policy.SpreadConstraint, hasCluster, duplicated bool, replicas int64) ([]candidate, error) {
	if !hasCluster {
		cluster = policy.SpreadConstraint{SpreadByField: spreadCluster, MinGroups: 1, MaxGroups: math.MaxInt32}
	}
	groups := groupByRegion(cands)
	if len(groups) < region.MinGroups {
		return nil, errors.New("the number of feasible region is less than spreadConstraint.MinGroups")
	}
	for i := range groups {
		groups[i].score = groupScore(groups[i].clusters, duplicated, replicas, region.MinGroups, cluster.MinGroups)
	}
	chosen := selectGroups(groups, region.MinGroups, region.MaxGroups, int64(cluster.MinGroups))
	if len(chosen) == 0 {
		return nil, errors.New("the number of clusters is less than the cluster spreadConstraint.MinGroups")
	}
	var picked, pool []candidate
	for _, g := range chosen {
		picked = append(picked, g.clusters[0])
		pool = append(pool, g.clusters[1:]...)
	}
	total := min(len(picked)+len(pool), cluster.MaxGroups)
	if rest := total - len(picked); rest > 0 {
		slices.SortFunc(pool, compareCandidates)
		picked = append(picked, pool[:rest]...)
	}
	return picked, nil
}

// groupByRegion groups candidates with a region, keeping candidate order
// inside each group; groups come in order of first appearance.
func groupByRegion(cands []candidate) []group {
	var groups []group
	index := map[string]int{}
	for _, c := range cands {
		r := c.c.Spec.Region
		if r == "" {
			continue
		}
		i, ok := index[r]
		if !ok {
			i = len(groups)
			index[r] = i
			groups = append(groups, group{name: r})
		}
		groups[i].clusters = append(groups[i].clusters, c)
		groups[i].value++
	}
	return groups
}

// weightUnit makes capacity dominate the cluster scores in a group score.
const weightUnit = 1000

// groupScore rates a topology group (reference §4.6). Duplicated: the
// clusters that can run all replicas count, then their mean score.
// Divided: the capacity reached towards ceil(replicas/groupMin) with at
// least max(clusterMin, groupMin) clusters, then the mean score of the
// clusters scanned.
func groupScore(clusters []candidate, duplicated bool, replicas int64, groupMin, clusterMin int) int64 {
	if duplicated {
		var valid, sum int64
		for _, c := range clusters {
			if c.avail >= replicas {
				valid++
				sum += c.score
			}
		}
		if valid == 0 {
			return 0
		}
		return valid*weightUnit + sum/valid
	}
	target := (replicas + int64(groupMin) - 1) / int64(groupMin)
	k := max(clusterMin, groupMin)
	var avail, scores, scanned int64
	for _, c := range clusters {
		avail += c.avail
		scores += c.score
		scanned++
		if scanned >= int64(k) && avail >= target {
			break
		}
	}
	if avail < target {
		return avail*weightUnit + scores/int64(len(clusters))
	}
	return target*weightUnit + scores/scanned
}

// path is one feasible combination of groups found by the search.
type path struct {
	id     int
	groups []*group
	weight int64 // sum of group scores
	value  int64 // sum of group values (cluster counts)
}

// selectGroups finds the best combination of between minGroups and
// maxGroups groups whose values (cluster counts) reach target (reference
// §4.4 "Group search"): a depth-first search over the groups sorted by
// value asc, weight desc, name asc, recording a path as soon as it is
// feasible; best path = highest weight, then value, then first found; then a
// feasible strict prefix of the best path is preferred.
func selectGroups(groups []group, minGroups, maxGroups int, target int64) []*group {
	if len(groups) == 0 {
		return nil
	}
	sorted := make([]*group, len(groups))
	for i := range groups {
		sorted[i] = &groups[i]
	}
	slices.SortFunc(sorted, func(a, b *group) int {
		if a.value != b.value {
			return cmp.Compare(a.value, b.value)
		}
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.name, b.name)
	})

	var paths []path
	record := func(cur []*group) {
		p := path{id: len(paths), groups: slices.Clone(cur)}
		for _, g := range p.groups {
			p.weight += g.score
			p.value += g.value
		}
		slices.SortStableFunc(p.groups, func(a, b *group) int {
			if a.score != b.score {
				return cmp.Compare(b.score, a.score)
			}
			return cmp.Compare(a.name, b.name)
		})
		paths = append(paths, p)
	}
	if len(sorted) == minGroups {
		// Only the full combination can be long enough.
		var sum int64
		for _, g := range sorted {
			sum += g.value
		}
		if sum >= target && minGroups <= maxGroups {
			record(sorted)
		}
	} else {
		cur := make([]*group, 0, maxGroups)
		var dfs func(sum int64, begin int)
		dfs = func(sum int64, begin int) {
			if sum >= target && len(cur) >= minGroups && len(cur) <= maxGroups {
				record(cur)
				return
			}
			if len(cur) >= maxGroups {
				return
			}
			for i := begin; i < len(sorted); i++ {
				cur = append(cur, sorted[i])
				dfs(sum+sorted[i].value, i+1)
				cur = cur[:len(cur)-1]
			}
		}
		dfs(0, 0)
	}
	if len(paths) == 0 {
		return nil
	}
	slices.SortStableFunc(paths, func(a, b path) int {
		if a.weight != b.weight {
			return cmp.Compare(b.weight, a.weight)
		}
		if a.value != b.value {
			return cmp.Compare(b.value, a.value)
		}
		return cmp.Compare(a.id, b.id)
	})
	best := paths[0]
	for _, p := range paths[1:] {
		if isStrictPrefix(p.groups, best.groups) {
			best = p
		}
	}
	return best.groups
}

func isStrictPrefix(prefix, of []*group) bool {
	if len(prefix) >= len(of) {
		return false
	}
	for i, g := range prefix {
		if of[i].name != g.name {
			return false
		}
	}
	return true
}
