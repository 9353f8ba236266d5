// Package workloadaffinity keeps a workload in the clusters of the other
// workloads of its affinity group (Karmada v1.17, reference features §1.3).
package workloadaffinity

import "github.com/flotilla-io/flotilla/schedulerd/framework"

// Name is the plugin name, Karmada's.
const Name = "WorkloadAffinity"

var unfit = framework.Unfit("ResourceBinding with the same affinity group does not target this cluster")

// WorkloadAffinity passes a cluster only when every placed peer of the
// binding's affinity group lists it (any replicas, 0 included), so the
// feasible set is the intersection of the placed peers' clusters and the
// first placed workload of a group is unconstrained. A cluster already in
// the binding's own placement always passes: the plugin never removes a
// placement.
type WorkloadAffinity struct{}

// New returns the plugin.
func New() WorkloadAffinity { return WorkloadAffinity{} }

// Name implements framework.Plugin.
func (WorkloadAffinity) Name() string { return Name }

// Prepare implements framework.PreparePlugin: without an affinity group,
// or with no peer placed yet, every cluster passes.
func (WorkloadAffinity) Prepare(req *framework.Request) *framework.Status {
	if req.Peers == nil || req.Peers.AffinityPlaced == 0 {
		return framework.Skipped()
	}
	return nil
}

// FilterAll implements framework.BatchFilterPlugin.
func (p WorkloadAffinity) FilterAll(req *framework.Request, clusters []*framework.ClusterInfo, statuses []*framework.Status) {
	for i, c := range clusters {
		statuses[i] = p.Filter(req, c)
	}
}

// Filter implements framework.FilterPlugin.
func (WorkloadAffinity) Filter(req *framework.Request, c *framework.ClusterInfo) *framework.Status {
	if req.InPrevious(c.Name) || req.Peers.AffinityAllows(c.Name) {
		return nil
	}
	return unfit
}
