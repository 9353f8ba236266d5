package schedulerd

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// member is everything schedulerd knows about one cluster.
type member struct {
	reg      events.ClusterRegistration
	health   *events.ClusterHealth
	capacity *events.ClusterCapacity
}

// Handler keeps the scheduler's state and turns events into placements.
type Handler struct {
	mu      sync.Mutex
	pub     events.Publisher
	source  string
	sched   *core.Scheduler
	metrics *metrics
	members map[string]*member
	// deregistered: deleted clusters' tombstones (stale registrations).
	deregistered events.Tombstones
	bindings     map[events.ObjectKey]events.Binding
	// specs decodes bindings: those of one policy share one decoded spec.
	specs      events.SpecCache
	placements map[events.ObjectKey]events.PlacementDecision
	// owed: failover history records not stored yet (sendHistory).
	owed []owedRecord
	now  func() time.Time
	// snap is the cluster snapshot decisions share; nil after any cluster
	// change, rebuilt on the next decision. view is failover's, likewise.
	snap *framework.Snapshot
	view *clusterView
	// work: each template's last status per cluster (health for failover).
	work map[events.ObjectKey]map[string]events.WorkStatus
	// ruleSince: since when each template's applicationFailureDetection
	// rules have held in each cluster (observed from work statuses).
	ruleSince map[events.ObjectKey]map[string]time.Time
	// due: when each template's failover rules must be looked at again.
	due     map[events.ObjectKey]time.Time
	limiter *rate.Limiter
	log     *zap.Logger
	// reserved: placed replicas not yet reported as allocated (overcommit
	// protection, reservations.go).
	reserved reservations
}

// NewHandler returns a handler with empty state.
func NewHandler(pub events.Publisher, instance string, sched *core.Scheduler, m *metrics) *Handler {
	if m == nil {
		m = newMetrics(nil)
	}
	return &Handler{pub: pub, source: "/schedulerd/" + instance, sched: sched, metrics: m,
		members: map[string]*member{}, bindings: map[events.ObjectKey]events.Binding{},
		placements: map[events.ObjectKey]events.PlacementDecision{}, now: time.Now,
		work: map[events.ObjectKey]map[string]events.WorkStatus{}, due: map[events.ObjectKey]time.Time{}, reserved: newReservations(),
		ruleSince: map[events.ObjectKey]map[string]time.Time{},
		limiter:   rate.NewLimiter(rate.Limit(DefaultEvictionLimit.PerSecond), DefaultEvictionLimit.Burst)}
}

// Handle dispatches one event.
func (h *Handler) Handle(ctx context.Context, e events.Event) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch events.Type(e.Type()) {
	case events.TypeBindingChanged:
		return h.HandleBindingChanged(ctx, e)
	case events.TypeBindingRemoved:
		return h.HandleBindingRemoved(ctx, e)
	case events.TypeClusterRegistered, events.TypeClusterDeregistered,
		events.TypeClusterHealthChanged, events.TypeClusterCapacityReported:
		return h.HandleClusterChanged(ctx, e)
	case events.TypeClusterHealthSnapshot:
		return h.HandleHealthSnapshot(ctx, e)
	case events.TypeWorkStatusChanged, events.TypeWorkDeleted:
		return h.HandleWorkStatus(ctx, e)
	}
	return events.Permanent(fmt.Errorf("schedulerd does not handle %q", e.Type()))
}

// HandleBindingChanged schedules a binding revision it has not seen.
func (h *Handler) HandleBindingChanged(ctx context.Context, e events.Event) error {
	// Kept encoded while it is decided: the placement embeds it as received.
	b, err := h.specs.DecodeBinding(e)
	if err != nil {
		return err
	}
	if b.Key.Kind == "" || b.Key.Name == "" {
		return events.Permanent(fmt.Errorf("binding without a key"))
	}
	if old, ok := h.bindings[b.Key]; ok && old.Revision >= b.Revision {
		return nil // stale or duplicate delivery
	}
	prev, had := h.bindings[b.Key]
	h.bindings[b.Key] = b
	if err := h.schedule(ctx, e, b.Key); err != nil {
		// Not placed: forget the revision, so that the redelivery schedules it.
		if had {
			h.bindings[b.Key] = prev
		} else {
			delete(h.bindings, b.Key)
		}
		return err
	}
	// Later decisions (cluster changes, failover) encode it afresh; keeping
	// the bytes of every binding would cost as much memory again.
	b.Reencode()
	h.bindings[b.Key] = b
	return nil
}

// HandleBindingRemoved withdraws a template's placement.
func (h *Handler) HandleBindingRemoved(ctx context.Context, e events.Event) error {
	var b events.Binding
	if err := events.Decode(e, &b); err != nil {
		return err
	}
	if old, ok := h.bindings[b.Key]; ok && old.Revision > b.Revision {
		return nil
	}
	delete(h.bindings, b.Key)
	h.dropReservations(b.Key)
	last, ok := h.placements[b.Key]
	if !ok || (!last.Scheduled && len(last.Clusters) == 0 && last.Error == "removed") {
		return nil
	}
	p := events.PlacementDecision{Key: b.Key, Generation: b.Generation, BindingRevision: b.Revision, Error: "removed", DecidedAt: h.now().UTC()}
	out, err := events.NewWithID(events.DeterministicID("placement-removed", b.Key.String(), fmt.Sprint(b.Revision)),
		events.TypePlacementRemoved, h.source, b.Key.String(), p)
	if err != nil {
		return events.Permanent(err)
	}
	events.CausedBy(&out, e)
	if err := events.PublishEffect(ctx, h.pub, events.PlacementSubject(b.Key), out); err != nil {
		return err
	}
	delete(h.placements, b.Key)
	return nil
}

// HandleClusterChanged updates the member snapshot and reschedules the
// bindings that follow cluster changes (reference §1.1): Duplicated and
// non-workload templates, anything not placed yet, and anything placed on a
// cluster that left.
func (h *Handler) HandleClusterChanged(ctx context.Context, e events.Event) error {
	switch events.Type(e.Type()) {
	case events.TypeClusterRegistered:
		var r events.ClusterRegistration
		if err := events.Decode(e, &r); err != nil {
			return err
		}
		if h.deregistered.Stale(r.Name, r.Generation) {
			return nil // older than the cluster's deregistration
		}
		m := h.member(r.Name)
		if m.reg.Generation > r.Generation {
			return nil
		}
		m.reg = r
	case events.TypeClusterDeregistered:
		var r events.ClusterRegistration
		if err := events.Decode(e, &r); err != nil {
			return err
		}
		if m := h.members[r.Name]; m != nil && events.Outdated(r.Generation, m.reg.Generation) {
			return nil // a registration newer than this deregistration holds
		}
		h.forget(r)
	case events.TypeClusterHealthChanged:
		var c events.ClusterHealth
		if err := events.Decode(e, &c); err != nil {
			return err
		}
		if !h.recordHealth(c) {
			return nil
		}
	case events.TypeClusterCapacityReported:
		var c events.ClusterCapacity
		if err := events.Decode(e, &c); err != nil {
			return err
		}
		if old := h.member(c.Cluster).capacity; old != nil && old.ObservedAt.After(c.ObservedAt) {
			return nil
		}
		h.member(c.Cluster).capacity = &c
		h.releaseReported(c)
	}
	h.snap, h.view = nil, nil
	if err := h.rescheduleAfterClusterChange(ctx, e); err != nil {
		return err
	}
	switch events.Type(e.Type()) {
	case events.TypeClusterHealthChanged:
		var c events.ClusterHealth
		_ = events.Decode(e, &c)
		return h.evaluateFailoverOn(ctx, e, c.Cluster)
	case events.TypeClusterRegistered:
		// spec.taints of the Cluster object count for NoExecute too.
		var r events.ClusterRegistration
		_ = events.Decode(e, &r)
		return h.evaluateFailoverOn(ctx, e, r.Name)
	}
	return nil
}

// forget drops a deregistered member and keeps its tombstone generation.
func (h *Handler) forget(r events.ClusterRegistration) {
	delete(h.members, r.Name)
	h.deregistered.Bury(r.Name, r.Generation)
}

// recordHealth keeps a member's health report unless an newer one is held.
func (h *Handler) recordHealth(c events.ClusterHealth) bool {
	if old := h.member(c.Cluster).health; old != nil && old.ObservedAt.After(c.ObservedAt) {
		return false
	}
	h.member(c.Cluster).health = &c
	ready := 0.0
	if c.Ready {
		ready = 1
	}
	h.metrics.members.WithLabelValues(c.Cluster).Set(ready)
	return true
}

// HandleHealthSnapshot resyncs every member's health from healthd's
// periodic snapshot; a report that differs from the one held is handled as
// that cluster's health change.
func (h *Handler) HandleHealthSnapshot(ctx context.Context, e events.Event) error {
	var s events.HealthSnapshot
	if err := events.Decode(e, &s); err != nil {
		return err
	}
	var changed []string
	for _, c := range s.Clusters {
		old := h.members[c.Cluster]
		if old == nil || old.reg.Generation == 0 {
			continue // not registered (any more)
		}
		if old.health != nil && sameHealth(*old.health, c) {
			continue
		}
		if h.recordHealth(c) {
			changed = append(changed, c.Cluster)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	h.snap, h.view = nil, nil
	if err := h.rescheduleAfterClusterChange(ctx, e); err != nil {
		return err
	}
	for _, c := range changed {
		if err := h.evaluateFailoverOn(ctx, e, c); err != nil {
			return err
		}
	}
	return nil
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

func (h *Handler) member(name string) *member {
	m, ok := h.members[name]
	if !ok {
		m = &member{reg: events.ClusterRegistration{Name: name}}
		h.members[name] = m
	}
	return m
}

func (h *Handler) rescheduleAfterClusterChange(ctx context.Context, cause events.Event) error {
	keys := make([]events.ObjectKey, 0, len(h.bindings))
	for k := range h.bindings {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		if !h.followsClusterChanges(k) {
			continue
		}
		if err := h.schedule(ctx, cause, k); err != nil {
			return err
		}
	}
	return nil
}

// followsClusterChanges: core.FollowsClusterChanges for a held binding.
func (h *Handler) followsClusterChanges(k events.ObjectKey) bool {
	b := h.bindings[k]
	var prev *events.PlacementDecision
	if last, placed := h.placements[k]; placed {
		prev = &last
	}
	return core.FollowsClusterChanges(&b, prev, h.gone)
}

// gone reports whether a cluster has left (or was never registered).
func (h *Handler) gone(cluster string) bool {
	m, ok := h.members[cluster]
	return !ok || m.reg.Spec.APIEndpoint == "" && m.reg.Generation == 0
}

// snapshot builds the scheduler's view of the members, sorted by name.
func (h *Handler) snapshot() []framework.ClusterInfo {
	names := make([]string, 0, len(h.members))
	for n, m := range h.members {
		if m.reg.Generation > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]framework.ClusterInfo, 0, len(names))
	for _, n := range names {
		m := h.members[n]
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
			ci.Allocatable, ci.Allocated, ci.Allocating = c.Allocatable, c.Allocated, h.reservedFor(n, c.Allocating)
			ci.APIEnablements = c.APIEnablements
			ci.CompleteAPIs = len(c.APIEnablements) > 0
		}
		out = append(out, ci)
	}
	return out
}

// schedule decides one binding and publishes the placement if it changed.
func (h *Handler) schedule(ctx context.Context, cause events.Event, k events.ObjectKey) error {
	return h.decide(ctx, cause, k, nil)
}

// decide is schedule with the binding's evictions given (nil: the ones its
// current placement carries); core.Decide holds the rules.
func (h *Handler) decide(ctx context.Context, cause events.Event, k events.ObjectKey, evs []events.Eviction) error {
	b, ok := h.bindings[k]
	if !ok {
		return nil
	}
	last, hadLast := h.placements[k]
	switch {
	case h.snap == nil:
		h.snap = framework.NewSnapshot(h.snapshot())
		clear(h.reserved.changed)
	case len(h.reserved.changed) > 0 && needsCapacity(b):
		// Capacity-driven strategies see the latest reservations (only the
		// clusters whose reservations changed are derived again); the
		// others do not depend on free capacity and keep the snapshot.
		alloc := make(map[string]corev1.ResourceList, len(h.reserved.changed))
		for name := range h.reserved.changed {
			if m := h.members[name]; m != nil && m.reg.Generation > 0 && m.capacity != nil {
				alloc[name] = h.reservedFor(name, m.capacity.Allocating)
			}
		}
		h.snap = h.snap.WithAllocating(alloc)
		clear(h.reserved.changed)
	}
	var prev *events.PlacementDecision
	if hadLast {
		prev = &last
	}
	// An explicit reschedule newer than the last decision asks for a fresh
	// one (reference §1.1 rule 3, §2.5).
	r := b.RescheduleRequestedAt
	fresh := r != nil && (!hadLast || r.After(last.DecidedAt))
	p := h.sched.Decide(core.DecideInput{Binding: b, Snapshot: h.snap, Previous: prev, Evictions: evs, Fresh: fresh, Now: h.now()})
	p.Binding = &b
	if hadLast && samePlacement(last, p) {
		h.metrics.decisions.WithLabelValues("unchanged").Inc()
		return nil
	}
	out, err := events.NewWithID(placementID(k, b.Revision, p, last, hadLast, cause), events.TypePlacementDecided, h.source, k.String(), p)
	if err != nil {
		return events.Permanent(err)
	}
	if cause.ID() != "" {
		events.CausedBy(&out, cause)
	}
	if err := events.PublishEffect(ctx, h.pub, events.PlacementSubject(k), out); err != nil {
		return err
	}
	var before []events.TargetCluster
	if hadLast {
		before = last.Clusters
	}
	h.reserve(b, before, p.Clusters)
	h.placements[k] = remembered(p)
	// A new placement (new clusters, a changed policy and its tolerations)
	// may change what failover must do: look on the next tick.
	h.due[k] = h.now()
	if p.Scheduled {
		h.metrics.decisions.WithLabelValues("scheduled").Inc()
	} else {
		h.metrics.decisions.WithLabelValues("unschedulable").Inc()
	}
	return nil
}

// placementID is a placement event's id: the same for the same decision
// made again from the same cause (a redelivery after a crash, which
// JetStream then drops as a duplicate), and different for a later decision
// that merely equals an earlier one. Without the cause (or, for decisions
// no event caused, the placement it replaces) a template moved A -> B -> A
// within JetStream's duplicate window had its return to A dropped as a
// duplicate of the first A: the member kept B.
func placementID(k events.ObjectKey, revision int64, p, last events.PlacementDecision, hadLast bool, cause events.Event) string {
	parts := []string{"placement", k.String(), fmt.Sprint(revision), placementFingerprint(p)}
	switch {
	case cause.ID() != "":
		parts = append(parts, "cause", cause.ID())
	case hadLast:
		parts = append(parts, "after", placementFingerprint(last))
	}
	return events.DeterministicID(parts...)
}

// remembered is the part of a published placement later decisions read
// (outcome, targets, revision, time). The explanation (feasible clusters,
// scores, diagnosis, the binding) is on the bus; keeping it for every
// template would multiply schedulerd's memory.
func remembered(p events.PlacementDecision) events.PlacementDecision {
	p.Feasible, p.Diagnosis, p.Scores, p.Binding, p.Warnings, p.Division = nil, nil, nil, nil, nil, ""
	return p
}

func samePlacement(a, b events.PlacementDecision) bool {
	return a.BindingRevision == b.BindingRevision && placementFingerprint(a) == placementFingerprint(b)
}

func placementFingerprint(p events.PlacementDecision) string {
	b := make([]byte, 0, 64+24*len(p.Clusters))
	b = strconv.AppendBool(b, p.Scheduled)
	b = append(b, '|')
	b = append(b, p.Error...)
	b = append(b, '|')
	b = append(b, p.AffinityName...)
	b = append(b, '|')
	for _, c := range p.Clusters {
		b = append(b, c.Name...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(c.Replicas), 10)
		b = append(b, ',')
	}
	for _, e := range p.Evictions {
		b = append(b, "|evicted "...)
		b = append(b, e.Cluster...)
		b = append(b, " kept="...)
		b = strconv.AppendBool(b, e.Kept())
	}
	return string(b)
}

// CatchUp schedules every binding whose latest revision has no placement
// yet: after a restart, the work a crash interrupted.
func (h *Handler) CatchUp(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]events.ObjectKey, 0, len(h.bindings))
	for k, b := range h.bindings {
		if p, ok := h.placements[k]; !ok || p.BindingRevision < b.Revision {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		if err := h.schedule(ctx, events.Event{}, k); err != nil {
			return err
		}
	}
	return nil
}
