package framework

import (
	"math"

	"github.com/flotilla-io/flotilla/events/policy"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ClusterInfo is the scheduler's immutable view of one member cluster: the
// registered Cluster object (policyd), its health (healthd) and its capacity
// and API list (healthd). A snapshot is a []ClusterInfo or, prepared once
// for many decisions, a *Snapshot; plugins must not modify it.
//
// A ClusterInfo taken from a Snapshot carries what the snapshot derived
// from it (facts, free resources, prices); the accessors below read that
// and compute the same answer from the fields otherwise. Changing a field
// of such a copy leaves the derived data stale: build a new Snapshot.
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

	derived *derived // set by NewSnapshot; nil: compute on demand
}

// Facts returns what cluster selectors look at (name, labels, provider,
// region, zones), for policy.ClusterAffinity.Matches.
func (c *ClusterInfo) Facts() policy.ClusterFacts {
	if c.derived != nil {
		return c.derived.facts
	}
	return policy.FactsOf(c.Name, c.Labels, c.Spec)
}

// Free returns how much of a resource the cluster has left, allocatable −
// allocated − allocating, in Units; ok is false when Allocatable does not
// report the resource at all. Figures missing from Allocated or Allocating
// count as 0.
func (c *ClusterInfo) Free(name corev1.ResourceName) (free int64, ok bool) {
	if d := c.derived; d != nil {
		if i := commonIndex(name); i >= 0 {
			return d.common[i].free, d.common[i].ok
		}
		for i := range d.free {
			if d.free[i].name == name {
				return d.free[i].free, true
			}
		}
		return 0, false
	}
	q, ok := c.Allocatable[name]
	if !ok {
		return 0, false
	}
	return Units(name, q) - unitsIn(c.Allocated, name) - unitsIn(c.Allocating, name), true
}

// ResourceUnits is an amount of one resource in Units.
type ResourceUnits struct {
	Name  corev1.ResourceName
	Value int64
}

// MaxReplicas is the core of the general estimator (reference §2.6): the
// free pods, lowered to free/request for every requested resource (whose
// values must be positive); 0 when Allocatable does not report pods or a
// requested resource. It stops early once the answer is 0 or less. Free
// amounts are read as Free reads them.
func (c *ClusterInfo) MaxReplicas(requests []ResourceUnits) int64 {
	d := c.derived
	if d == nil {
		n, _ := c.Free(corev1.ResourcePods)
		for _, r := range requests {
			if n <= 0 {
				break
			}
			v, ok := c.Free(r.Name)
			if !ok {
				return 0
			}
			n = min(n, v/r.Value)
		}
		return n
	}
	n := d.common[0].free // pods; 0 when not reported
	for i := range requests {
		if n <= 0 {
			break
		}
		r := &requests[i]
		var v int64
		if k := commonIndex(r.Name); k >= 0 {
			if !d.common[k].ok {
				return 0
			}
			v = d.common[k].free
		} else {
			var ok bool
			if v, ok = c.Free(r.Name); !ok {
				return 0
			}
		}
		n = min(n, v/r.Value)
	}
	return n
}

// Units is the integer unit the general estimator compares a resource in:
// millicores for cpu, whole units (rounded up) for everything else, as
// Karmada's estimator does.
func Units(name corev1.ResourceName, q resource.Quantity) int64 {
	// Most quantities are whole numbers: read those directly (what
	// MilliValue and Value answer for them, without their scaling).
	if v, ok := q.AsInt64(); ok {
		if name != corev1.ResourceCPU {
			return v
		}
		if v <= math.MaxInt64/1000 && v >= math.MinInt64/1000 {
			return v * 1000
		}
	}
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

func unitsIn(l corev1.ResourceList, name corev1.ResourceName) int64 {
	if len(l) == 0 {
		return 0
	}
	q, ok := l[name]
	if !ok {
		return 0
	}
	return Units(name, q)
}
