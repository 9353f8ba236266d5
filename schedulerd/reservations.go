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
	cluster    string
	replicas   int32
	perReplica corev1.ResourceList
	at         time.Time
	// runningAt: when executord reported them available (zero: not yet).
	runningAt time.Time
}

// reservations are kept per template (a placement touches one template's
// few clusters: one map access per decision) with a running total per
// cluster (Σ replicas × per-replica requests, pods included), so reading a
// cluster's reserved figure costs the same with ten reservations or a
// hundred thousand.
type reservations struct {
	byTemplate map[events.ObjectKey][]*reservation
	totals     map[string]corev1.ResourceList
	counts     map[string]int
	// changed: clusters whose total changed since the shared snapshot
	// last took them in.
	changed map[string]bool
}

func newReservations() reservations {
	return reservations{byTemplate: map[events.ObjectKey][]*reservation{}, totals: map[string]corev1.ResourceList{}, counts: map[string]int{}, changed: map[string]bool{}}
}

// count is the number of templates with replicas reserved in cluster.
func (rs *reservations) count(cluster string) int { return rs.counts[cluster] }

// find is k's reservation in cluster, or nil.
func (rs *reservations) find(cluster string, k events.ObjectKey) *reservation {
	for _, r := range rs.byTemplate[k] {
		if r.cluster == cluster {
			return r
		}
	}
	return nil
}

// addToTotal adds n replicas of per (n may be negative) to cluster's total.
func (rs *reservations) addToTotal(cluster string, per corev1.ResourceList, n int32) {
	if n == 0 {
		return
	}
	rs.changed[cluster] = true
	total := rs.totals[cluster]
	if total == nil {
		total = corev1.ResourceList{}
		rs.totals[cluster] = total
	}
	for name, q := range per {
		add := q.DeepCopy()
		add.Mul(int64(n))
		cur := total[name]
		cur.Add(add)
		total[name] = cur
	}
	pods := total[corev1.ResourcePods]
	pods.Add(*resource.NewQuantity(int64(n), resource.DecimalSI))
	total[corev1.ResourcePods] = pods
}

// remove forgets k's reservation in cluster.
func (rs *reservations) remove(cluster string, k events.ObjectKey) {
	list := rs.byTemplate[k]
	i := slices.IndexFunc(list, func(r *reservation) bool { return r.cluster == cluster })
	if i < 0 {
		return
	}
	r := list[i]
	rs.addToTotal(cluster, r.perReplica, -r.replicas)
	if list = slices.Delete(list, i, i+1); len(list) == 0 {
		delete(rs.byTemplate, k)
	} else {
		rs.byTemplate[k] = list
	}
	if rs.counts[cluster]--; rs.counts[cluster] <= 0 {
		delete(rs.counts, cluster)
		delete(rs.totals, cluster) // exact arithmetic leaves zeros; start clean
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
	rs := &h.reserved
	r := rs.find(cluster, k)
	if delta < 0 {
		if r == nil {
			return
		}
		if r.replicas+delta <= 0 {
			rs.remove(cluster, k)
		} else {
			r.replicas += delta
			rs.addToTotal(cluster, r.perReplica, delta)
		}
		return
	}
	if r == nil {
		r = &reservation{cluster: cluster, perReplica: per}
		rs.byTemplate[k] = append(rs.byTemplate[k], r)
		rs.counts[cluster]++
	}
	r.replicas += delta
	rs.addToTotal(cluster, r.perReplica, delta)
	r.at, r.runningAt = now, time.Time{}
}

// dropReservations forgets a template's reservations (its placement was removed).
func (h *Handler) dropReservations(k events.ObjectKey) {
	for _, r := range slices.Clone(h.reserved.byTemplate[k]) {
		h.reserved.remove(r.cluster, k)
	}
}

// reservationRunning notes that executord reports a template's replicas
// available in a cluster.
func (h *Handler) reservationRunning(st events.WorkStatus) {
	r := h.reserved.find(st.Cluster, st.Key)
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
	type gone struct {
		cluster string
		k       events.ObjectKey
	}
	var drop []gone
	for k, list := range h.reserved.byTemplate {
		for _, r := range list {
			covered := r.cluster == rep.Cluster && !r.runningAt.IsZero() && rep.ObservedAt.After(r.runningAt)
			if covered || now.Sub(r.at) > ReservationTTL {
				drop = append(drop, gone{r.cluster, k})
			}
		}
	}
	for _, g := range drop {
		h.reserved.remove(g.cluster, g.k)
	}
}

// reservedFor adds a cluster's reservations to its reported Allocating.
func (h *Handler) reservedFor(cluster string, base corev1.ResourceList) corev1.ResourceList {
	total := h.reserved.totals[cluster]
	if h.reserved.counts[cluster] == 0 || total == nil {
		return base
	}
	out := base.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range total {
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
