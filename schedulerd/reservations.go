package schedulerd

import (
	"slices"
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

// clusterReservations are one cluster's reservations and their running
// total (Σ replicas × per-replica requests, pods included), kept as they
// change so that reading a cluster's reserved figure costs the same with
// ten reservations or a hundred thousand.
type clusterReservations struct {
	byKey map[events.ObjectKey]*reservation
	total corev1.ResourceList
}

// reservations: cluster -> its reservations.
type reservations map[string]*clusterReservations

// count is the number of templates with replicas reserved in cluster.
func (rs reservations) count(cluster string) int {
	if c := rs[cluster]; c != nil {
		return len(c.byKey)
	}
	return 0
}

// addReplicas adds n replicas of per (n may be negative) to the total.
func (c *clusterReservations) addReplicas(per corev1.ResourceList, n int32) {
	if n == 0 {
		return
	}
	if c.total == nil {
		c.total = corev1.ResourceList{}
	}
	for name, q := range per {
		add := q.DeepCopy()
		add.Mul(int64(n))
		cur := c.total[name]
		cur.Add(add)
		c.total[name] = cur
	}
	pods := c.total[corev1.ResourcePods]
	pods.Add(*resource.NewQuantity(int64(n), resource.DecimalSI))
	c.total[corev1.ResourcePods] = pods
}

// remove forgets one template's reservation.
func (c *clusterReservations) remove(k events.ObjectKey) {
	if r := c.byKey[k]; r != nil {
		c.addReplicas(r.perReplica, -r.replicas)
		delete(c.byKey, k)
	}
	if len(c.byKey) == 0 {
		c.total = nil // exact arithmetic leaves zeros; start clean
	}
}

// reserve records a placement's change of replicas per cluster for a
// template with known requests.
func (h *Handler) reserve(b events.Binding, before, after []events.TargetCluster) {
	if len(b.ReplicaRequirements) == 0 {
		return
	}
	now := h.now()
	for _, c := range after {
		var had int32
		for _, o := range before {
			if o.Name == c.Name {
				had = o.Replicas
				break
			}
		}
		if delta := c.Replicas - had; delta != 0 {
			h.adjustReservation(c.Name, b.Key, delta, b.ReplicaRequirements, now)
		}
	}
	for _, o := range before {
		if !slices.ContainsFunc(after, func(c events.TargetCluster) bool { return c.Name == o.Name }) {
			h.adjustReservation(o.Name, b.Key, -o.Replicas, b.ReplicaRequirements, now)
		}
	}
}

func (h *Handler) adjustReservation(cluster string, k events.ObjectKey, delta int32, per corev1.ResourceList, now time.Time) {
	if delta == 0 {
		return
	}
	c := h.reserved[cluster]
	var r *reservation
	if c != nil {
		r = c.byKey[k]
	}
	if delta < 0 {
		if r == nil {
			return
		}
		if r.replicas+delta <= 0 {
			c.remove(k)
		} else {
			r.replicas += delta
			c.addReplicas(r.perReplica, delta)
		}
		h.reservedChanged = true
		return
	}
	if c == nil {
		c = &clusterReservations{byKey: map[events.ObjectKey]*reservation{}}
		h.reserved[cluster] = c
	}
	if r == nil {
		r = &reservation{perReplica: per}
		c.byKey[k] = r
	}
	r.replicas += delta
	c.addReplicas(r.perReplica, delta)
	r.at, r.runningAt = now, time.Time{}
	h.reservedChanged = true
}

// dropReservations forgets a template's reservations (its placement was removed).
func (h *Handler) dropReservations(k events.ObjectKey) {
	for _, c := range h.reserved {
		if _, ok := c.byKey[k]; ok {
			c.remove(k)
			h.reservedChanged = true
		}
	}
}

// reservationRunning notes that executord reports a template's replicas
// available in a cluster.
func (h *Handler) reservationRunning(st events.WorkStatus) {
	c := h.reserved[st.Cluster]
	if c == nil {
		return
	}
	r := c.byKey[st.Key]
	if r == nil || !r.runningAt.IsZero() || st.UpdatedAt.Before(r.at) {
		return // none, already running, or a report from before the placement
	}
	// The cluster's whole share must run, not just as many as were added.
	want := int32(0)
	for _, tc := range h.placements[st.Key].Clusters {
		if tc.Name == st.Cluster {
			want = tc.Replicas
		}
	}
	if want > 0 && (st.AvailableReplicas >= want || st.ReadyReplicas >= want) {
		r.runningAt = st.UpdatedAt
	}
}

// releaseReported drops the reservations a cluster's capacity report now
// covers, and every expired one.
func (h *Handler) releaseReported(rep events.ClusterCapacity) {
	now := h.now()
	for cluster, c := range h.reserved {
		for k, r := range c.byKey {
			covered := cluster == rep.Cluster && !r.runningAt.IsZero() && rep.ObservedAt.After(r.runningAt)
			if covered || now.Sub(r.at) > ReservationTTL {
				c.remove(k)
				h.reservedChanged = true
			}
		}
	}
}

// reservedFor adds a cluster's reservations to its reported Allocating.
func (h *Handler) reservedFor(cluster string, base corev1.ResourceList) corev1.ResourceList {
	c := h.reserved[cluster]
	if c == nil || len(c.byKey) == 0 {
		return base
	}
	out := base.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range c.total {
		cur := out[name]
		cur.Add(q)
		out[name] = cur
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
