package framework

import (
	"github.com/flotilla-io/flotilla/events/policy"
	corev1 "k8s.io/api/core/v1"
)

// ClusterInfo is the scheduler's immutable view of one member cluster: the
// registered Cluster object (policyd), its health (healthd) and its capacity
// and API list (healthd). A snapshot is a []ClusterInfo; plugins must not
// modify it.
type ClusterInfo struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
	// Spec carries provider, region, zones and taints. The shell merges the
	// NoSchedule taints healthd asks for (not-ready, unreachable) into
	// Spec.Taints: that, not Ready, is what keeps a sick cluster out, as in
	// Karmada (reference §1 step 1).
	Spec policy.ClusterSpec
	// Ready is informational: no default plugin filters on it.
	Ready bool
	// APIEnablements lists what the cluster serves; nil means no figures
	// have been reported yet (see the APIEnablement plugin for what that means).
	APIEnablements []policy.APIEnablement
	// CompleteAPIs is the CompleteAPIEnablements condition: true when
	// APIEnablements is known to be the full list.
	CompleteAPIs bool
	// Allocatable, Allocated and Allocating are the resource summary the
	// general estimator reads. A nil Allocatable means "no figures": the
	// estimator then says the cluster can take 0 more replicas.
	Allocatable corev1.ResourceList
	Allocated   corev1.ResourceList
	Allocating  corev1.ResourceList
}

// Facts returns what cluster selectors look at (name, labels, provider,
// region, zones), for policy.ClusterAffinity.Matches.
func (c *ClusterInfo) Facts() policy.ClusterFacts {
	return policy.FactsOf(c.Name, c.Labels, c.Spec)
}
