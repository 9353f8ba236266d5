package schedulerd

import (
	"maps"
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
	replicas int32
	at       time.Time
	// runningAt: when executord reported them available (zero: not yet).
	runningAt time.Time
}

// templateReservations are one template's reservations by cluster, and
// one replica's requests in milli-units (pods included), the arithmetic
// the totals are kept in.
type templateReservations struct {
	perReplica []milliResource
	byCluster  map[string]*reservation
	// slab holds the reservations of the placement that made them, in one
	// allocation instead of one per cluster.
	slab []reservation
}

type milliResource struct {
	name  corev1.ResourceName
	milli int64
}

// perReplicaMilli is one replica's requests, and one pod, in milli-units.
// A request finer than a milli-unit is rounded up: the reservation errs on
// the side of a fuller cluster.
func perReplicaMilli(req corev1.ResourceList) []milliResource {
	out := make([]milliResource, 0, len(req)+1)
	for name, q := range req {
		if name != corev1.ResourcePods {
			out = append(out, milliResource{name, q.MilliValue()})
		}
	}
	return append(out, milliResource{corev1.ResourcePods, 1000})
}

// reservations are kept per template (a placement touches one template:
// one map access per decision, then one per cluster) with a running total
// per cluster (Σ replicas × per-replica requests, pods included, in
// milli-units), so reading a cluster's reserved figure costs the same with
// ten reservations or a million.
type reservations struct {
	byTemplate map[events.ObjectKey]*templateReservations
	totals     map[string]map[corev1.ResourceName]int64
	counts     map[string]int
	// changed: clusters whose total changed since the shared snapshot
	// last took them in.
	changed map[string]bool
	// runningIn: per cluster, the templates whose reservation there runs
	// (executord reported it), which the cluster's next capacity report
	// releases; the only ones a report has to look at.
	runningIn map[string]map[events.ObjectKey]bool
	// shared: per cluster, what the other schedulerd instances hold
	// reserved there (the ledger's figures, ledger.go).
	shared map[string]map[corev1.ResourceName]int64
	// oldest is at most the oldest reservation's time: before it is
	// ReservationTTL old, no reservation can have expired and nothing is
	// scanned. lastSweep bounds full scans to one a second.
	oldest, lastSweep time.Time
}

func newReservations() reservations {
	return reservations{byTemplate: map[events.ObjectKey]*templateReservations{}, totals: map[string]map[corev1.ResourceName]int64{},
		counts: map[string]int{}, changed: map[string]bool{}, runningIn: map[string]map[events.ObjectKey]bool{},
		shared: map[string]map[corev1.ResourceName]int64{}}
}

// count is the number of templates with replicas reserved in cluster.
func (rs *reservations) count(cluster string) int { return rs.counts[cluster] }

// find is k's reservation in cluster, or nil.
func (rs *reservations) find(cluster string, k events.ObjectKey) *reservation {
	if t := rs.byTemplate[k]; t != nil {
		return t.byCluster[cluster]
	}
	return nil
}

// addToTotal adds n replicas of per (n may be negative) to cluster's total.
func (rs *reservations) addToTotal(cluster string, per []milliResource, n int32) {
	if n == 0 {
		return
	}
	rs.changed[cluster] = true
	total := rs.totals[cluster]
	if total == nil {
		total = make(map[corev1.ResourceName]int64, len(per))
		rs.totals[cluster] = total
	}
	for _, r := range per {
		total[r.name] += r.milli * int64(n)
	}
}

// remove forgets k's reservation in cluster.
func (rs *reservations) remove(cluster string, k events.ObjectKey) {
	t := rs.byTemplate[k]
	if t == nil {
		return
	}
	r := t.byCluster[cluster]
	if r == nil {
		return
	}
	rs.addToTotal(cluster, t.perReplica, -r.replicas)
	delete(t.byCluster, cluster)
	if run := rs.runningIn[cluster]; run != nil {
		delete(run, k)
	}
	if len(t.byCluster) == 0 {
		delete(rs.byTemplate, k)
	}
	if rs.counts[cluster]--; rs.counts[cluster] <= 0 {
		delete(rs.counts, cluster)
		delete(rs.totals, cluster) // start clean
	}
}

// reserve records a placement's change of replicas per cluster for a
// template with known requests, at now.
func (rs *reservations) reserve(b events.Binding, before, after []events.TargetCluster, now time.Time) {
	if len(b.ReplicaRequirements) == 0 {
		return
	}
	if _, ok := rs.byTemplate[b.Key]; !ok && len(after) > 0 {
		t := &templateReservations{perReplica: perReplicaMilli(b.ReplicaRequirements),
			byCluster: make(map[string]*reservation, len(after)), slab: make([]reservation, 0, len(after))}
		rs.byTemplate[b.Key] = t
		defer func() {
			if len(t.byCluster) == 0 && rs.byTemplate[b.Key] == t {
				delete(rs.byTemplate, b.Key) // nothing reserved after all
			}
		}()
	}
	had := make(map[string]int32, len(before))
	for _, o := range before {
		had[o.Name] = o.Replicas
	}
	for _, c := range after {
		if delta := c.Replicas - had[c.Name]; delta != 0 {
			rs.adjust(c.Name, b.Key, delta, b.ReplicaRequirements, now)
		}
		delete(had, c.Name)
	}
	for name, n := range had { // clusters the placement left
		rs.adjust(name, b.Key, -n, b.ReplicaRequirements, now)
	}
}

// adjust changes k's reservation in cluster by delta replicas of per.
func (rs *reservations) adjust(cluster string, k events.ObjectKey, delta int32, per corev1.ResourceList, now time.Time) {
	if delta == 0 {
		return
	}
	t := rs.byTemplate[k]
	var r *reservation
	if t != nil {
		r = t.byCluster[cluster]
	}
	if delta < 0 {
		if r == nil {
			return
		}
		if r.replicas+delta <= 0 {
			rs.remove(cluster, k)
		} else {
			r.replicas += delta
			rs.addToTotal(cluster, t.perReplica, delta)
		}
		return
	}
	if t == nil {
		t = &templateReservations{perReplica: perReplicaMilli(per), byCluster: map[string]*reservation{}}
		rs.byTemplate[k] = t
	}
	if r == nil {
		if n := len(t.slab); n < cap(t.slab) {
			t.slab = t.slab[:n+1]
			r = &t.slab[n]
		} else {
			r = &reservation{}
		}
		t.byCluster[cluster] = r
		rs.counts[cluster]++
	}
	r.replicas += delta
	rs.addToTotal(cluster, t.perReplica, delta)
	r.at, r.runningAt = now, time.Time{}
	if run := rs.runningIn[cluster]; run != nil {
		delete(run, k)
	}
	if rs.oldest.IsZero() || now.Before(rs.oldest) {
		rs.oldest = now
	}
}

// drop forgets a template's reservations (its placement was removed).
func (rs *reservations) drop(k events.ObjectKey) {
	t := rs.byTemplate[k]
	if t == nil {
		return
	}
	for _, cluster := range slices.Collect(maps.Keys(t.byCluster)) {
		rs.remove(cluster, k)
	}
}

// running notes that executord reports a template's replicas available
// in a cluster; p is the template's placement (zero: not placed).
func (rs *reservations) running(st events.WorkStatus, p events.PlacementDecision) {
	r := rs.find(st.Cluster, st.Key)
	if r == nil || !r.runningAt.IsZero() || st.UpdatedAt.Before(r.at) {
		return // none, already running, or a report from before the placement
	}
	// The cluster's whole share must run, not just as many as were added.
	want := int32(0)
	for _, tc := range p.Clusters {
		if tc.Name == st.Cluster {
			want = tc.Replicas
		}
	}
	if want > 0 && (st.AvailableReplicas >= want || st.ReadyReplicas >= want) {
		r.runningAt = st.UpdatedAt
		run := rs.runningIn[st.Cluster]
		if run == nil {
			run = map[events.ObjectKey]bool{}
			rs.runningIn[st.Cluster] = run
		}
		run[st.Key] = true
	}
}

// releaseReported drops the reservations a cluster's capacity report now
// covers (running ones the report observed after they ran), and every
// expired one.
func (rs *reservations) releaseReported(rep events.ClusterCapacity, now time.Time) {
	for k := range rs.runningIn[rep.Cluster] {
		if r := rs.find(rep.Cluster, k); r != nil && rep.ObservedAt.After(r.runningAt) {
			rs.remove(rep.Cluster, k)
		}
	}
	if rs.oldest.IsZero() || now.Sub(rs.oldest) <= ReservationTTL || now.Sub(rs.lastSweep) < time.Second {
		return
	}
	rs.lastSweep, rs.oldest = now, time.Time{}
	type gone struct {
		cluster string
		k       events.ObjectKey
	}
	var drop []gone
	for k, t := range rs.byTemplate {
		for cluster, r := range t.byCluster {
			switch {
			case now.Sub(r.at) > ReservationTTL:
				drop = append(drop, gone{cluster, k})
			case rs.oldest.IsZero() || r.at.Before(rs.oldest):
				rs.oldest = r.at
			}
		}
	}
	for _, g := range drop {
		rs.remove(g.cluster, g.k)
	}
}

// setShared sets what the other instances hold reserved in cluster.
func (rs *reservations) setShared(cluster string, total map[corev1.ResourceName]int64) {
	if sameTotal(rs.shared[cluster], total) {
		return
	}
	if isZero(total) {
		delete(rs.shared, cluster)
	} else {
		rs.shared[cluster] = total
	}
	rs.changed[cluster] = true
}

// reservedFor adds a cluster's reservations, this instance's and the
// others', to its reported Allocating.
func (rs *reservations) reservedFor(cluster string, base corev1.ResourceList) corev1.ResourceList {
	total, shared := rs.totals[cluster], rs.shared[cluster]
	if (rs.counts[cluster] == 0 || total == nil) && shared == nil {
		return base
	}
	out := base.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for _, t := range []map[corev1.ResourceName]int64{total, shared} {
		for name, milli := range t {
			cur := out[name]
			cur.Add(*resource.NewMilliQuantity(milli, resource.DecimalSI))
			out[name] = cur
		}
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
