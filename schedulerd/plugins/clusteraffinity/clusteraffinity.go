// Package clusteraffinity filters clusters by the placement's cluster
// affinity (reference §3.1).
package clusteraffinity

import "github.com/flotilla-io/flotilla/schedulerd/framework"

// Name is the plugin name.
const Name = "ClusterAffinity"

// Reason is Karmada's wording.
const Reason = "cluster(s) did not match the placement cluster affinity constraint"

var unfit = framework.Unfit(Reason)

// ClusterAffinity passes a cluster that matches the affinity in force:
// placement.clusterAffinity, or the observed clusterAffinities term and,
// for workloads, any of that term's overflow affinities. With no affinity
// every cluster passes. The core prepares the affinities once per request
// (framework.Request.Affinities), so no selector is parsed per cluster.
type ClusterAffinity struct{}

// New returns the plugin.
func New() ClusterAffinity { return ClusterAffinity{} }

// Name implements framework.Plugin.
func (ClusterAffinity) Name() string { return Name }

// FilterAll implements framework.BatchFilterPlugin.
func (p ClusterAffinity) FilterAll(req *framework.Request, clusters []*framework.ClusterInfo, statuses []*framework.Status) {
	if len(req.Affinities) == 0 {
		return
	}
	primary := &req.Affinities[0]
	overflow := req.Workload && len(req.Affinities) > 1
	if hits := primary.Hits(clusters); hits != nil {
		for i, ok := range hits {
			switch {
			case ok:
			case overflow:
				statuses[i] = p.Filter(req, clusters[i])
			default:
				statuses[i] = unfit
			}
		}
		return
	}
	for i, c := range clusters {
		if !primary.Matches(c) {
			statuses[i] = p.Filter(req, c)
		}
	}
}

// Filter implements framework.FilterPlugin.
func (ClusterAffinity) Filter(req *framework.Request, c *framework.ClusterInfo) *framework.Status {
	if len(req.Affinities) == 0 || req.Affinities[0].Matches(c) {
		return nil
	}
	if req.Workload {
		for i := 1; i < len(req.Affinities); i++ {
			if req.Affinities[i].Matches(c) {
				return nil
			}
		}
	}
	return unfit
}
