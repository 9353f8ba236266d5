// Package clustereviction filters clusters the binding is being evicted
// from (reference §3.5).
package clustereviction

import "github.com/flotilla-io/flotilla/schedulerd/framework"

// Name is the plugin name.
const Name = "ClusterEviction"

var unfit = framework.Unfit("cluster(s) is in the process of eviction")

// ClusterEviction fails a cluster that is the source of one of the
// binding's graceful eviction tasks, so the replicas leaving it are placed
// elsewhere.
type ClusterEviction struct{}

// New returns the plugin.
func New() ClusterEviction { return ClusterEviction{} }

// Name implements framework.Plugin.
func (ClusterEviction) Name() string { return Name }

// Prepare implements framework.PreparePlugin: a binding without eviction
// tasks has nothing to check per cluster.
func (ClusterEviction) Prepare(req *framework.Request) *framework.Status {
	if len(req.Evicted) == 0 {
		return framework.Skipped()
	}
	return nil
}

// FilterAll implements framework.BatchFilterPlugin.
func (p ClusterEviction) FilterAll(req *framework.Request, clusters []*framework.ClusterInfo, statuses []*framework.Status) {
	for i, c := range clusters {
		statuses[i] = p.Filter(req, c)
	}
}

// Filter implements framework.FilterPlugin.
func (ClusterEviction) Filter(req *framework.Request, c *framework.ClusterInfo) *framework.Status {
	if req.IsEvicted(c.Name) {
		return unfit
	}
	return nil
}
