// Package spreadconstraint filters clusters that lack a field the placement
// spreads by (reference §3.4). Choosing clusters by the constraints is the
// core's select step, not this filter.
package spreadconstraint

import "github.com/flotilla-io/flotilla/schedulerd/framework"

// Name is the plugin name.
const Name = "SpreadConstraint"

var (
	noProvider = framework.Unfit("cluster(s) did not have provider property")
	noRegion   = framework.Unfit("cluster(s) did not have region property")
	noZones    = framework.Unfit("cluster(s) did not have zones property")
)

// SpreadConstraint requires a non-empty provider, region or zone list for
// each spreadByField provider/region/zone constraint. `cluster` and
// spreadByLabel constraints impose nothing here.
type SpreadConstraint struct{}

// New returns the plugin.
func New() SpreadConstraint { return SpreadConstraint{} }

// Name implements framework.Plugin.
func (SpreadConstraint) Name() string { return Name }

// Prepare implements framework.PreparePlugin: without a provider, region
// or zone constraint there is nothing to check per cluster.
func (SpreadConstraint) Prepare(req *framework.Request) *framework.Status {
	for _, sc := range req.Placement.SpreadConstraints {
		switch sc.SpreadByField {
		case "provider", "region", "zone":
			return nil
		}
	}
	return framework.Skipped()
}

// FilterAll implements framework.BatchFilterPlugin.
func (p SpreadConstraint) FilterAll(req *framework.Request, clusters []*framework.ClusterInfo, statuses []*framework.Status) {
	for i, c := range clusters {
		statuses[i] = p.Filter(req, c)
	}
}

// Filter implements framework.FilterPlugin.
func (SpreadConstraint) Filter(req *framework.Request, c *framework.ClusterInfo) *framework.Status {
	for _, sc := range req.Placement.SpreadConstraints {
		switch sc.SpreadByField {
		case "provider":
			if c.Spec.Provider == "" {
				return noProvider
			}
		case "region":
			if c.Spec.Region == "" {
				return noRegion
			}
		case "zone":
			// The deprecated single zone counts, as in policy.FactsOf.
			if len(c.Spec.Zones) == 0 && c.Spec.Zone == "" {
				return noZones
			}
		}
	}
	return nil
}
