// Package plugins holds the in-tree scheduler plugins, one sub-package
// each, and DefaultProfile, the one place that lists them.
package plugins

import (
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/apienablement"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/clusteraffinity"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/clustereviction"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/clusterlocality"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/cost"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/gpu"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/preferredaffinity"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/spreadconstraint"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/tainttoleration"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/workloadaffinity"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/workloadantiaffinity"
)

// DefaultProfile is Flotilla's plugin set.
//
// Filters: every filter runs on every cluster and every failure is recorded,
// so the order does not change which clusters pass; it is the order reasons
// appear in a diagnosis. ClusterAffinity comes first because it is what
// users get wrong most and rules out most clusters; TaintToleration next
// (cluster health reaches the scheduler as taints); then the
// resource-dependent APIEnablement, the spread field check and the eviction
// check, then the workload affinity and anti-affinity filters (Karmada's
// feature-gated pair; they skip every binding without a group). This is
// Karmada's registry order. Karmada stops at a cluster's first failing
// filter, in map order (reference features §1.3 rule 8); Flotilla records
// every failure, in this order, so the diagnosis is deterministic.
//
// Scores are summed, so their order changes no result; they are listed from
// the strongest habit to the most situational: ClusterLocality (100 for
// clusters already running the binding, so reschedules do not move work
// needlessly), the seed-004 soft preferences (their weights, stated by the
// user), then the two that read cluster figures and are normalised to
// 0..100 across the feasible clusters: Cost (seed 002: cheaper clusters
// score higher; nothing without price annotations) and GPU (seed 004: more
// free GPUs score higher; only for replicas that request GPUs). Keeping
// the normalised ones at most 100 means that, alone, neither outweighs
// locality: a running workload is not moved for a cheaper cluster.
func DefaultProfile() framework.Profile {
	return framework.Profile{
		Filters: []framework.FilterPlugin{
			clusteraffinity.New(),
			tainttoleration.New(),
			apienablement.New(),
			spreadconstraint.New(),
			clustereviction.New(),
			workloadaffinity.New(),
			workloadantiaffinity.New(),
		},
		Scores: []framework.ScorePlugin{
			clusterlocality.New(),
			preferredaffinity.New(),
			cost.New(),
			gpu.New(),
		},
	}
}
