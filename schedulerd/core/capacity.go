package core

import (
	"math"

	"github.com/flotilla-io/flotilla/events"
	corev1 "k8s.io/api/core/v1"
)

// estimator is Karmada's built-in general estimator (reference §2.6): how
// many more replicas of this binding a cluster can start, from its resource
// summary.
type estimator struct {
	workload bool
	desired  int64
	requests []request
}

type request struct {
	name  corev1.ResourceName
	milli bool // compare in milli-units (cpu); others in whole units
	value int64
}

func newEstimator(b *events.Binding, workload bool) estimator {
	e := estimator{workload: workload, desired: int64(b.Replicas)}
	for name, q := range b.ReplicaRequirements {
		r := request{name: name, milli: name == corev1.ResourceCPU}
		if r.milli {
			r.value = q.MilliValue()
		} else {
			r.value = q.Value()
		}
		if r.value > 0 {
			e.requests = append(e.requests, r)
		}
	}
	return e
}

// free returns the cluster's AllocatableReplicas for the binding:
//   - non-workloads: MaxInt32 (no estimator is asked);
//   - no figures (nil Allocatable): 0, not "unknown", as Karmada's general
//     estimator answers for a cluster without a resource summary;
//   - otherwise the free pods (allocatable - allocated - allocating), lowered
//     to free/request for every requested resource. A requested resource the
//     cluster does not report at all gives 0; so does a summary without
//     "pods", as in Karmada.
//
// An answer of MaxInt32 or more means "unbounded" and becomes the desired
// replica count.
func (e *estimator) free(alloc, allocated, allocating corev1.ResourceList) int64 {
	if !e.workload {
		return math.MaxInt32
	}
	if alloc == nil {
		return 0
	}
	n := amount(alloc, corev1.ResourcePods, false) - amount(allocated, corev1.ResourcePods, false) - amount(allocating, corev1.ResourcePods, false)
	for _, r := range e.requests {
		if n <= 0 {
			break
		}
		q, ok := alloc[r.name]
		if !ok {
			return 0
		}
		v := q.Value()
		if r.milli {
			v = q.MilliValue()
		}
		v -= amount(allocated, r.name, r.milli) + amount(allocating, r.name, r.milli)
		if k := v / r.value; k < n {
			n = k
		}
	}
	if n <= 0 {
		return 0
	}
	if n >= math.MaxInt32 {
		return e.desired
	}
	return n
}

func amount(l corev1.ResourceList, name corev1.ResourceName, milli bool) int64 {
	q, ok := l[name]
	if !ok {
		return 0
	}
	if milli {
		return q.MilliValue()
	}
	return q.Value()
}
