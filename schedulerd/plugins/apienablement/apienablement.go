// Package apienablement filters clusters that do not serve the binding's
// API resource (reference §3.3).
package apienablement

import "github.com/flotilla-io/flotilla/schedulerd/framework"

// Name is the plugin name.
const Name = "APIEnablement"

// APIEnablement passes a cluster that lists the binding's group/version and
// kind in its API enablements, or that already runs the binding.
//
// Flotilla rule (differs from Karmada): a cluster whose APIEnablements is
// nil has reported no API list yet (a freshly joined member before its
// first capacity probe) and is treated as serving everything, so that
// joining a cluster and applying a policy do not race. Once a list is
// reported, only a positive listing passes; an unlisted resource fails,
// as "disabled" when the list is complete (CompleteAPIs) and "unknown"
// otherwise, as in Karmada.
type APIEnablement struct{}

// New returns the plugin.
func New() APIEnablement { return APIEnablement{} }

// Name implements framework.Plugin.
func (APIEnablement) Name() string { return Name }

// FilterAll implements framework.BatchFilterPlugin. On a snapshot's view
// the answer per cluster for the binding's API resource is worked out
// once per snapshot (Snapshot.Memo) and shared by every binding of that
// resource.
func (p APIEnablement) FilterAll(req *framework.Request, clusters []*framework.ClusterInfo, statuses []*framework.Status) {
	gv, kind := req.Binding.APIVersion, req.Binding.Key.Kind
	if gv == "" || kind == "" {
		return
	}
	if snap := req.Snapshot; snap.IsView(clusters) {
		answers := snap.Memo(Name+"\x00"+gv+"\x00"+kind, func() any {
			out := make([]*framework.Status, len(clusters))
			for i, c := range clusters {
				if c.APIEnablements != nil {
					out[i] = served(c, gv, kind)
				}
			}
			return out
		}).([]*framework.Status)
		for i, st := range answers {
			if st != nil && !req.InPrevious(clusters[i].Name) {
				statuses[i] = st
			}
		}
		return
	}
	for i, c := range clusters {
		if c.APIEnablements != nil {
			statuses[i] = p.Filter(req, c)
		}
	}
}

// Filter implements framework.FilterPlugin.
func (APIEnablement) Filter(req *framework.Request, c *framework.ClusterInfo) *framework.Status {
	if c.APIEnablements == nil || req.InPrevious(c.Name) {
		return nil
	}
	gv, kind := req.Binding.APIVersion, req.Binding.Key.Kind
	if gv == "" || kind == "" {
		return nil // nothing to check against; the binding names no API resource
	}
	return served(c, gv, kind)
}

// served is nil when the cluster lists the resource, else why not.
func served(c *framework.ClusterInfo, gv, kind string) *framework.Status {
	for i := range c.APIEnablements {
		en := &c.APIEnablements[i]
		if en.GroupVersion != gv {
			continue
		}
		for _, r := range en.Resources {
			if r.Kind == kind {
				return nil
			}
		}
	}
	if c.CompleteAPIs {
		return framework.Unfit("cluster(s) did not have the API resource (" + gv + ", Kind=" + kind + " is not served)")
	}
	return framework.Unfit("cluster(s) did not have the API resource (" + gv + ", Kind=" + kind + " is not listed and the cluster's API list is incomplete)")
}
