package schedulerd

import (
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// member is everything schedulerd knows about one cluster.
type member struct {
	reg      events.ClusterRegistration
	health   *events.ClusterHealth
	capacity *events.ClusterCapacity
}

// memberView is what schedulerd knows of the member clusters
// (registrations, health and capacity by name, the tombstones of deleted
// clusters) and the two views the decisions between two cluster changes
// share: the scheduler's snapshot and failover's health and taints. Every
// change drops both (changed); they are built again when next read.
type memberView struct {
	byName map[string]*member
	// deregistered: deleted clusters' tombstones (stale registrations).
	deregistered events.Tombstones
	snap         *framework.Snapshot
	failover     *clusterView
	// pulling: whether some member is in Pull mode (nil: not yet looked).
	pulling *bool
}

func newMemberView() memberView { return memberView{byName: map[string]*member{}} }

// get returns name's member, created empty if unknown.
func (v *memberView) get(name string) *member {
	m, ok := v.byName[name]
	if !ok {
		m = &member{reg: events.ClusterRegistration{Name: name}}
		v.byName[name] = m
	}
	return m
}

// changed drops the shared views after a cluster change.
func (v *memberView) changed() { v.snap, v.failover, v.pulling = nil, nil, nil }

// anyPulls reports whether some member is in Pull mode.
func (v *memberView) anyPulls() bool {
	if v.pulling == nil {
		pulls := false
		for _, m := range v.byName {
			pulls = pulls || m.reg.Spec.PullMode()
		}
		v.pulling = &pulls
	}
	return *v.pulling
}

// forget drops a deregistered member's registration and keeps its
// tombstone generation. Its health and capacity stay: they describe the
// cluster, not the registration, and healthd publishes a member's health
// only when it changes, so a cluster joined again is as healthy as its
// last report says (as `flotilla get clusters` and a rebuilt schedulerd
// read it), not not-ready until its health next changes.
func (v *memberView) forget(r events.ClusterRegistration) {
	if m, ok := v.byName[r.Name]; ok {
		m.reg = events.ClusterRegistration{Name: r.Name}
	}
	v.deregistered.Bury(r.Name, r.Generation)
}

// recordHealth keeps a member's health report unless a newer one is held.
func (v *memberView) recordHealth(c events.ClusterHealth) bool {
	if old := v.get(c.Cluster).health; old != nil && old.ObservedAt.After(c.ObservedAt) {
		return false
	}
	v.get(c.Cluster).health = &c
	return true
}

// gone reports whether a cluster has left (or was never registered).
func (v *memberView) gone(cluster string) bool {
	m, ok := v.byName[cluster]
	return !ok || m.reg.Spec.APIEndpoint == "" && m.reg.Generation == 0
}

// clusters builds the scheduler's view of the registered members, sorted
// by name; reserved adds a cluster's reservations to its Allocating.
func (v *memberView) clusters(reserved func(cluster string, allocating corev1.ResourceList) corev1.ResourceList) []framework.ClusterInfo {
	names := make([]string, 0, len(v.byName))
	for n, m := range v.byName {
		if m.reg.Generation > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]framework.ClusterInfo, 0, len(names))
	for _, n := range names {
		m := v.byName[n]
		ci := framework.ClusterInfo{Name: n, Labels: m.reg.Labels, Annotations: m.reg.Annotations, Spec: m.reg.Spec}
		ci.Spec.Taints = slices.Clone(m.reg.Spec.Taints)
		switch {
		case m.health == nil:
			// No health report yet: Karmada taints a cluster without a Ready condition not-ready.
			ci.Spec.Taints = append(ci.Spec.Taints, corev1.Taint{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule})
		default:
			ci.Ready = m.health.Ready
			ci.Spec.Taints = append(ci.Spec.Taints, m.health.Taints...)
		}
		if c := m.capacity; c != nil {
			ci.Allocatable, ci.Allocated, ci.Allocating = c.Allocatable, c.Allocated, reserved(n, c.Allocating)
			ci.APIEnablements = c.APIEnablements
			ci.CompleteAPIs = len(c.APIEnablements) > 0
		}
		out = append(out, ci)
	}
	return out
}

// reportsCapacity reports whether cluster's free capacity is known (a
// capacity report is held): only there can it limit a placement.
func (v *memberView) reportsCapacity(cluster string) bool {
	m := v.byName[cluster]
	return m != nil && m.capacity != nil
}

// fits reports whether two reserved totals (milli-units) fit together in
// cluster's free capacity as reported (allocatable − allocated −
// allocating), for every resource the cluster reports allocatable.
func (v *memberView) fits(cluster string, a, b map[corev1.ResourceName]int64) bool {
	m := v.byName[cluster]
	if m == nil || m.capacity == nil {
		return true
	}
	c := m.capacity
	for r, alloc := range c.Allocatable {
		free := alloc.MilliValue()
		if q, ok := c.Allocated[r]; ok {
			free -= q.MilliValue()
		}
		if q, ok := c.Allocating[r]; ok {
			free -= q.MilliValue()
		}
		if a[r]+b[r] > free {
			return false
		}
	}
	return true
}

// snapshotFor is the snapshot a decision on b reads: built when a cluster
// changed; for the capacity-driven strategies, with the latest
// reservations (only the clusters whose reservations changed are derived
// again). The other strategies do not depend on free capacity and keep
// the snapshot as it is.
func (v *memberView) snapshotFor(b events.Binding, rs *reservations) *framework.Snapshot {
	switch {
	case v.snap == nil:
		v.snap = framework.NewSnapshot(v.clusters(rs.reservedFor))
		clear(rs.changed)
	case len(rs.changed) > 0 && needsCapacity(b):
		alloc := make(map[string]corev1.ResourceList, len(rs.changed))
		for name := range rs.changed {
			if m := v.byName[name]; m != nil && m.reg.Generation > 0 && m.capacity != nil {
				alloc[name] = rs.reservedFor(name, m.capacity.Allocating)
			}
		}
		v.snap = v.snap.WithAllocating(alloc)
		clear(rs.changed)
	}
	return v.snap
}

// clusterView is the cluster health and taints failover reads, shared by
// the evaluations between two cluster changes.
type clusterView struct {
	health map[string]*events.ClusterHealth
	taints map[string][]corev1.Taint
}

// failoverView returns failover's view of the members.
func (v *memberView) failoverView() *clusterView {
	if v.failover != nil {
		return v.failover
	}
	fv := &clusterView{health: map[string]*events.ClusterHealth{}, taints: map[string][]corev1.Taint{}}
	for n, m := range v.byName {
		fv.health[n] = m.health
		var ts []corev1.Taint
		ts = append(ts, m.reg.Spec.Taints...)
		if m.health != nil {
			ts = append(ts, m.health.Taints...)
		}
		fv.taints[n] = ts
	}
	v.failover = fv
	return fv
}

// sameHealth: nothing failover or the filters read differs (state, Ready,
// since, failingSince, each taint with its timeAdded).
func sameHealth(a, b events.ClusterHealth) bool {
	if a.State != b.State || a.Ready != b.Ready || !a.Since.Equal(b.Since) || len(a.Taints) != len(b.Taints) {
		return false
	}
	if (a.FailingSince == nil) != (b.FailingSince == nil) || a.FailingSince != nil && !a.FailingSince.Equal(*b.FailingSince) {
		return false
	}
	for i := range a.Taints {
		x, y := a.Taints[i], b.Taints[i]
		if x.Key != y.Key || x.Value != y.Value || x.Effect != y.Effect || (x.TimeAdded == nil) != (y.TimeAdded == nil) ||
			x.TimeAdded != nil && !x.TimeAdded.Equal(y.TimeAdded) {
			return false
		}
	}
	return true
}
