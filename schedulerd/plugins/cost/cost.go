// Package cost scores clusters by what a replica costs there (seed 002).
package cost

import (
	"math"

	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// Name is the plugin name.
const Name = "Cost"

// MaxScore is the score of the cheapest priced cluster.
const MaxScore = 100

// Cost prefers cheaper clusters. A cluster's price per replica is
// α·cpu price·cpu cores + β·memory price·memory GiB of one replica's
// requests (framework.ReplicaCost; α and β from
// placement.replicaScheduling.costWeights, default 1 and 1), with the
// prices from the cluster annotations framework.AnnotationCPUPrice and
// framework.AnnotationMemoryPrice. Scores are normalised across the
// feasible clusters: the cheapest gets 100, the dearest 0, linearly in
// between (all 100 when the prices are equal). A cluster without prices
// scores 0: no bonus, and no reason either, since it is not a failure.
// With no priced cluster at all the plugin does nothing.
type Cost struct{}

// New returns the plugin.
func New() Cost { return Cost{} }

// Name implements framework.Plugin.
func (Cost) Name() string { return Name }

// Prepare implements framework.PreparePlugin: it reads the cost model
// once. On a snapshot without any priced cluster every cluster would score
// 0: the plugin is skipped.
func (Cost) Prepare(req *framework.Request) *framework.Status {
	if req.Snapshot != nil && !req.Snapshot.Priced() {
		return framework.Skipped()
	}
	rc := framework.NewReplicaCost(req.Binding, req.Placement)
	req.SetState(Name, rc)
	return nil
}

// unpriced is the raw score of a cluster without prices.
const unpriced = -1

// nanos scales a price to the raw int64 score (nano-units per hour).
const nanos = 1e9

// Score implements framework.ScorePlugin: the raw score is the price per
// replica in nano-units (unpriced: -1); NormalizeScore turns it into
// 0..100.
func (Cost) Score(req *framework.Request, c *framework.ClusterInfo) (int64, *framework.Status) {
	p, ok := c.Prices()
	if !ok {
		return unpriced, nil
	}
	rc, ok := req.State(Name).(framework.ReplicaCost)
	if !ok {
		rc = framework.NewReplicaCost(req.Binding, req.Placement)
	}
	v := math.Round(rc.PerReplica(p) * nanos)
	if v >= math.MaxInt64/2 {
		return math.MaxInt64 / 2, nil
	}
	return int64(v), nil
}

// NormalizeScore implements framework.NormalizeScorePlugin.
func (Cost) NormalizeScore(_ *framework.Request, _ []*framework.ClusterInfo, scores []int64) *framework.Status {
	lo, hi := int64(math.MaxInt64), int64(-1)
	for _, s := range scores {
		if s == unpriced {
			continue
		}
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		switch {
		case s == unpriced:
			scores[i] = 0
		case hi == lo:
			scores[i] = MaxScore
		default:
			scores[i] = int64(math.Round(MaxScore * float64(hi-s) / float64(hi-lo)))
		}
	}
	return nil
}
