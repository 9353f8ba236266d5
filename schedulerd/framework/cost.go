package framework

import (
	"math"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	corev1 "k8s.io/api/core/v1"
)

// Cluster annotations carrying prices (seed 002), as decimal numbers in
// any currency, the same one on every cluster.
const (
	// AnnotationCPUPrice is the price of one core for one hour.
	AnnotationCPUPrice = "flotilla.io/cpu-price"
	// AnnotationMemoryPrice is the price of one GiB of memory for one hour.
	AnnotationMemoryPrice = "flotilla.io/memory-price"
)

// Prices is a cluster's price list, per core-hour and per GiB-hour.
type Prices struct {
	CPU    float64
	Memory float64
}

// Prices returns the cluster's prices. ok is false unless both annotations
// are present and are finite, non-negative numbers: a cluster with a
// missing or unreadable price is unpriced, not free.
func (c *ClusterInfo) Prices() (p Prices, ok bool) {
	if c.derived != nil {
		return c.derived.prices, c.derived.priced
	}
	return pricesOf(c)
}

func pricesOf(c *ClusterInfo) (Prices, bool) {
	if len(c.Annotations) < 2 {
		return Prices{}, false // both annotations are needed
	}
	cpu, ok1 := price(c.Annotations, AnnotationCPUPrice)
	mem, ok2 := price(c.Annotations, AnnotationMemoryPrice)
	if !ok1 || !ok2 {
		return Prices{}, false
	}
	return Prices{CPU: cpu, Memory: mem}, true
}

func price(annotations map[string]string, key string) (float64, bool) {
	s, ok := annotations[key]
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// ReplicaCost turns a cluster's prices into the hourly price of one
// replica: CPU·cpu price + Memory·memory price. CPU is α × the replica's
// cpu request in cores and Memory is β × its memory request in GiB, with α
// and β from placement.replicaScheduling.costWeights (default 1 each).
//
// A replica that requests neither cpu nor memory is priced as one core and
// one GiB (α·cpu price + β·memory price): the prices still rank the
// clusters, and the cost stays proportional to the replica count.
type ReplicaCost struct {
	CPU    float64
	Memory float64
}

// NewReplicaCost reads the cost model of a binding and its placement.
func NewReplicaCost(b *events.Binding, pl *policy.Placement) ReplicaCost {
	alpha, beta := 1.0, 1.0
	if rs := pl.ReplicaScheduling; rs != nil && rs.CostWeights != nil {
		if w := rs.CostWeights.CPU; w != nil {
			alpha = *w
		}
		if w := rs.CostWeights.Memory; w != nil {
			beta = *w
		}
	}
	cpu, hasCPU := b.ReplicaRequirements[corev1.ResourceCPU]
	mem, hasMem := b.ReplicaRequirements[corev1.ResourceMemory]
	if !hasCPU && !hasMem {
		return ReplicaCost{CPU: alpha, Memory: beta}
	}
	const gib = 1 << 30
	return ReplicaCost{
		CPU:    alpha * float64(cpu.MilliValue()) / 1000,
		Memory: beta * float64(mem.Value()) / gib,
	}
}

// PerReplica is the hourly price of one replica at prices p.
func (rc ReplicaCost) PerReplica(p Prices) float64 {
	return rc.CPU*p.CPU + rc.Memory*p.Memory
}
