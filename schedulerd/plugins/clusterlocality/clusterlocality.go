// Package clusterlocality scores clusters that already run the binding
// (reference §3.6).
package clusterlocality

import "github.com/flotilla-io/flotilla/schedulerd/framework"

// Name is the plugin name.
const Name = "ClusterLocality"

// MaxScore is given to a cluster in the binding's current result.
const MaxScore = 100

// ClusterLocality scores 100 for a cluster in the binding's current result
// and 0 otherwise, so rescheduling prefers not to move work.
type ClusterLocality struct{}

// New returns the plugin.
func New() ClusterLocality { return ClusterLocality{} }

// Name implements framework.Plugin.
func (ClusterLocality) Name() string { return Name }

// Prepare implements framework.PreparePlugin: on a first schedule every
// cluster scores 0, so there is nothing to do per cluster.
func (ClusterLocality) Prepare(req *framework.Request) *framework.Status {
	if len(req.Previous) == 0 {
		return framework.Skipped()
	}
	return nil
}

// Score implements framework.ScorePlugin.
func (ClusterLocality) Score(req *framework.Request, c *framework.ClusterInfo) (int64, *framework.Status) {
	if req.InPrevious(c.Name) {
		return MaxScore, nil
	}
	return 0, nil
}
