package schedulerd

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Overcommit protection (issue 3): replicas schedulerd has placed but the
// member has not yet reported as allocated count against the member's free
// capacity, so that a burst of decisions cannot place the same free
// capacity twice (a known Karmada problem: its estimator only sees what the
// members report). They are added to the cluster's Allocating figure, which
// the general estimator already subtracts (free = allocatable − allocated −
// allocating).
//
// A reservation is made for the replicas a placement adds to a cluster and
// released when the member has caught up: executord reports the template
// available there with at least the reserved replicas, and a capacity
// report observed after that status arrives (its Allocated then includes
// them). ReservationTTL bounds a reservation whose replicas never start.

// ReservationTTL is how long placed replicas count against a cluster at most.
const ReservationTTL = 5 * time.Minute

// reservation is one template's placed-but-not-yet-allocated replicas in
// one cluster.
type reservation struct {
	replicas   int32
	perReplica corev1.ResourceList
	at         time.Time
	// runningAt: when executord reported them available (zero: not yet).
	runningAt time.Time
}

// reservations: cluster -> template -> reservation.
type reservations map[string]map[events.ObjectKey]*reservation

// reserve records a placement's change of replicas per cluster for a
// template with known requests.
func (h *Handler) reserve(b events.Binding, before, after []events.TargetCluster) {
	if len(b.ReplicaRequirements) == 0 {
		return
	}
	old := map[string]int32{}
	for _, c := range before {
		old[c.Name] = c.Replicas
	}
	now := h.now()
	seen := map[string]bool{}
	for _, c := range after {
		seen[c.Name] = true
		delta := c.Replicas - old[c.Name]
		if delta == 0 {
			continue
		}
		h.adjustReservation(c.Name, b.Key, delta, b.ReplicaRequirements, now)
	}
	for name, n := range old {
		if !seen[name] {
			h.adjustReservation(name, b.Key, -n, b.ReplicaRequirements, now)
		}
	}
}

func (h *Handler) adjustReservation(cluster string, k events.ObjectKey, delta int32, per corev1.ResourceList, now time.Time) {
	m := h.reserved[cluster]
	r := m[k]
	if delta < 0 {
		if r == nil {
			return
		}
		r.replicas += delta
		if r.replicas <= 0 {
			delete(m, k)
		}
		h.reservedChanged = true
		return
	}
	if m == nil {
		m = map[events.ObjectKey]*reservation{}
		h.reserved[cluster] = m
	}
	if r == nil {
		r = &reservation{perReplica: per}
		m[k] = r
	}
	r.replicas += delta
	r.at, r.runningAt = now, time.Time{}
	h.reservedChanged = true
}

// dropReservations forgets a template's reservations (its placement was removed).
func (h *Handler) dropReservations(k events.ObjectKey) {
	for _, m := range h.reserved {
		if _, ok := m[k]; ok {
			delete(m, k)
			h.reservedChanged = true
		}
	}
}

// reservationRunning notes that executord reports a template's replicas
// available in a cluster.
func (h *Handler) reservationRunning(st events.WorkStatus) {
	r := h.reserved[st.Cluster][st.Key]
	if r == nil || !r.runningAt.IsZero() || st.UpdatedAt.Before(r.at) {
		return // none, already running, or a report from before the placement
	}
	// The cluster's whole share must run, not just as many as were added.
	want := int32(0)
	for _, c := range h.placements[st.Key].Clusters {
		if c.Name == st.Cluster {
			want = c.Replicas
		}
	}
	if want > 0 && (st.AvailableReplicas >= want || st.ReadyReplicas >= want) {
		r.runningAt = st.UpdatedAt
	}
}

// releaseReported drops the reservations a cluster's capacity report now
// covers, and every expired one.
func (h *Handler) releaseReported(c events.ClusterCapacity) {
	now := h.now()
	for cluster, m := range h.reserved {
		for k, r := range m {
			covered := cluster == c.Cluster && !r.runningAt.IsZero() && c.ObservedAt.After(r.runningAt)
			if covered || now.Sub(r.at) > ReservationTTL {
				delete(m, k)
				h.reservedChanged = true
			}
		}
	}
}

// reservedFor sums a cluster's reservations as extra Allocating resources.
func (h *Handler) reservedFor(cluster string, base corev1.ResourceList) corev1.ResourceList {
	m := h.reserved[cluster]
	if len(m) == 0 {
		return base
	}
	out := base.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	keys := make([]events.ObjectKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		r := m[k]
		for name, q := range r.perReplica {
			add := q.DeepCopy()
			add.Mul(int64(r.replicas))
			cur := out[name]
			cur.Add(add)
			out[name] = cur
		}
		pods := out[corev1.ResourcePods]
		pods.Add(*resource.NewQuantity(int64(r.replicas), resource.DecimalSI))
		out[corev1.ResourcePods] = pods
	}
	return out
}

// needsCapacity: the strategies whose result depends on free capacity.
func needsCapacity(b events.Binding) bool {
	if b.Spec == nil {
		return false
	}
	switch b.Spec.Placement.Strategy() {
	case policy.StrategyDynamicWeight, policy.StrategyAggregated, policy.StrategyCostOptimized:
		return true
	}
	return false
}
