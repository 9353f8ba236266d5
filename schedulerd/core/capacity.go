package core

import (
	"math"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// estimator is Karmada's built-in general estimator (reference §2.6): how
// many more replicas of this binding a cluster can start, from its resource
// summary.
type estimator struct {
	workload bool
	desired  int64
	requests []framework.ResourceUnits // positive values only
}

func newEstimator(b *events.Binding, workload bool) estimator {
	e := estimator{workload: workload, desired: int64(b.Replicas)}
	for name, q := range b.ReplicaRequirements {
		if v := framework.Units(name, q); v > 0 {
			e.requests = append(e.requests, framework.ResourceUnits{Name: name, Value: v})
		}
	}
	return e
}

// freeOf returns the cluster's AllocatableReplicas for the binding:
//   - non-workloads: MaxInt32 (no estimator is asked);
//   - no figures (nil Allocatable): 0, not "unknown", as Karmada's general
//     estimator answers for a cluster without a resource summary;
//   - otherwise the free pods (allocatable - allocated - allocating), lowered
//     to free/request for every requested resource (nvidia.com/gpu
//     included). A requested resource the cluster does not report at all
//     gives 0; so does a summary without "pods", as in Karmada.
//
// An answer of MaxInt32 or more means "unbounded" and becomes the desired
// replica count. The free amounts come from ClusterInfo.Free, which a
// Snapshot has computed once.
func (e *estimator) freeOf(c *framework.ClusterInfo) int64 {
	if !e.workload {
		return math.MaxInt32
	}
	if c.Allocatable == nil {
		return 0
	}
	n := c.MaxReplicas(e.requests)
	if n <= 0 {
		return 0
	}
	if n >= math.MaxInt32 {
		return e.desired
	}
	return n
}
