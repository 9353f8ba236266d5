// Package workloadantiaffinity keeps a workload out of the clusters of the
// other workloads of its anti-affinity group (Karmada v1.17, reference
// features §1.3).
package workloadantiaffinity

import "github.com/flotilla-io/flotilla/schedulerd/framework"

// Name is the plugin name, Karmada's.
const Name = "WorkloadAntiAffinity"

var unfit = framework.Unfit("cluster already has workload with the same anti-affinity group")

// WorkloadAntiAffinity fails a cluster any peer of the binding's
// anti-affinity group lists. A cluster already in the binding's own
// placement always passes: the plugin never removes a placement.
type WorkloadAntiAffinity struct{}

// New returns the plugin.
func New() WorkloadAntiAffinity { return WorkloadAntiAffinity{} }

// Name implements framework.Plugin.
func (WorkloadAntiAffinity) Name() string { return Name }

// Prepare implements framework.PreparePlugin: without an anti-affinity
// group, or with no peer placed, every cluster passes.
func (WorkloadAntiAffinity) Prepare(req *framework.Request) *framework.Status {
	if req.Peers == nil || len(req.Peers.AntiAffinityIn) == 0 {
		return framework.Skipped()
	}
	return nil
}

// FilterAll implements framework.BatchFilterPlugin.
func (p WorkloadAntiAffinity) FilterAll(req *framework.Request, clusters []*framework.ClusterInfo, statuses []*framework.Status) {
	for i, c := range clusters {
		statuses[i] = p.Filter(req, c)
	}
}

// Filter implements framework.FilterPlugin.
func (WorkloadAntiAffinity) Filter(req *framework.Request, c *framework.ClusterInfo) *framework.Status {
	if req.InPrevious(c.Name) || req.Peers.AntiAffinityAllows(c.Name) {
		return nil
	}
	return unfit
}
