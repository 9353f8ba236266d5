package schedulerd

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/internal/clock"
	"github.com/flotilla-io/flotilla/schedulerd/core"
)

// Handler keeps the scheduler's state and turns events into placements:
// one method per consumed event here; the decision shell is placements.go,
// the failover shell failover.go and history.go, overcommit protection
// reservations.go. It is safe for concurrent use (the three consumers and
// the failover tick share it under one lock).
type Handler struct {
	mu      sync.Mutex
	pub     events.Publisher
	source  string
	sched   *core.Scheduler
	metrics *metrics
	log     *zap.Logger
	clock   clock.Clock
	// owner: whether this instance decides a template (SetOwner).
	owner func(events.ObjectKey) bool

	members memberView    // the clusters, and the views decisions share
	book    placementBook // live bindings and last placements
	work    workHealth    // executord's statuses, for failover
	queue   failoverQueue // when failover looks at each template again
	history history       // failover records owed to the bus
	// reserved: placed replicas not yet reported as allocated (overcommit
	// protection, reservations.go).
	reserved reservations
	// ledger shares the reservations with the other instances (ledger.go).
	ledger ledger
	// placed: the workload affinity peers and the quota ledger decisions
	// share (core.Placed; queue.go).
	placed *core.Placed
}

// NewHandler returns a handler with empty state, on the real clock.
func NewHandler(pub events.Publisher, instance string, sched *core.Scheduler, m *metrics) *Handler {
	if m == nil {
		m = newMetrics(nil)
	}
	return &Handler{pub: pub, source: "/schedulerd/" + instance, sched: sched, metrics: m, clock: clock.Real,
		members: newMemberView(), book: newPlacementBook(), work: newWorkHealth(),
		queue: newFailoverQueue(DefaultEvictionLimit), reserved: newReservations(), placed: core.NewPlaced()}
}

func (h *Handler) now() time.Time { return h.clock.Now() }

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
	case events.TypeObjectAccepted, events.TypeObjectRemoved:
		return h.HandleQuotaChanged(ctx, e)
	}
	return events.Permanent(fmt.Errorf("schedulerd does not handle %q", e.Type()))
}

// HandleBindingChanged schedules a binding revision it has not seen.
func (h *Handler) HandleBindingChanged(ctx context.Context, e events.Event) error {
	if h.leftUnread(ctx, e) {
		return nil
	}
	return h.readBinding(ctx, e)
}

// leftUnread keeps the binding ctx delivers undecoded when another
// instance decides its template (placementBook.unread).
func (h *Handler) leftUnread(ctx context.Context, e events.Event) bool {
	d, ok := events.DeliveryOf(ctx)
	if !ok {
		return false
	}
	k, err := events.ParseSubjectKey(d.Subject)
	if err != nil || h.owns(k) {
		return false
	}
	if last, ok := h.book.unread[k]; !ok || d.Sequence > last.sequence {
		h.book.unread[k] = unreadBinding{event: e, sequence: d.Sequence}
	}
	return true
}

// readBinding decodes a binding and schedules it if it is a revision not
// seen yet.
func (h *Handler) readBinding(ctx context.Context, e events.Event) error {
	// Kept encoded while it is decided: the placement embeds it as received.
	b, err := h.book.specs.DecodeBinding(e)
	if err != nil {
		return err
	}
	if b.Key.Kind == "" || b.Key.Name == "" {
		return events.Permanent(fmt.Errorf("binding without a key"))
	}
	if old, ok := h.book.bindings[b.Key]; ok && old.Revision >= b.Revision {
		return nil // stale or duplicate delivery
	}
	if h.book.removed.Stale(b.Key.String(), b.Revision) {
		// From before the template's removal: redelivered late (a killed
		// schedulerd had taken it), it would place a deleted template.
		return nil
	}
	prev, had := h.book.bindings[b.Key]
	h.book.bindings[b.Key] = b
	h.book.arrived(b.Key)
	placed := false
	defer func() {
		if placed {
			return
		}
		// Not placed (an error, or a panic the consumer dead-letters):
		// forget the revision, so that a redelivery schedules it and no
		// later cluster change decides a binding that failed.
		if had {
			h.book.bindings[b.Key] = prev
		} else {
			delete(h.book.bindings, b.Key)
		}
	}()
	if err := h.schedule(ctx, e, b.Key); err != nil {
		return err
	}
	placed = true
	// Later decisions (cluster changes, failover) encode it afresh; keeping
	// the bytes of every binding would cost as much memory again.
	b.Reencode()
	h.book.bindings[b.Key] = b
	return nil
}

// HandleBindingRemoved withdraws a template's placement.
func (h *Handler) HandleBindingRemoved(ctx context.Context, e events.Event) error {
	var b events.Binding
	if err := events.Decode(e, &b); err != nil {
		return err
	}
	if old, ok := h.book.bindings[b.Key]; ok && old.Revision > b.Revision {
		return nil
	}
	h.book.removed.Bury(b.Key.String(), b.Revision)
	delete(h.book.bindings, b.Key)
	delete(h.book.unread, b.Key)
	h.reserved.drop(b.Key)
	h.placed.Forget(b.Key)
	if err := h.withdraw(ctx, e, b.Key, b.Generation, b.Revision); err != nil {
		return err
	}
	// Its usage left the namespace's quotas: what they refused may fit now.
	return h.retryQuotaRefused(ctx, e, b.Key.Namespace)
}

// withdraw publishes that removed template k (its binding's generation
// and revision given) is placed nowhere any more, unless its placement
// says so already or another instance owns it.
func (h *Handler) withdraw(ctx context.Context, cause events.Event, k events.ObjectKey, generation, revision int64) error {
	last, ok := h.book.placements[k]
	if !ok || (!last.Scheduled && len(last.Clusters) == 0 && last.Error == "removed") || !h.owns(k) {
		return nil
	}
	p := events.PlacementDecision{Key: k, Generation: generation, BindingRevision: revision, Error: "removed", DecidedAt: h.now().UTC()}
	out, err := events.NewWithID(events.DeterministicID("placement-removed", k.String(), fmt.Sprint(revision)),
		events.TypePlacementRemoved, h.source, k.String(), p)
	if err != nil {
		return events.Permanent(err)
	}
	if cause.ID() != "" {
		events.CausedBy(&out, cause)
	}
	if err := events.PublishEffect(ctx, h.pub, events.PlacementSubject(k), out); err != nil {
		return err
	}
	if err := h.assign(ctx, out, events.TypeWorkUnassigned, p, &last); err != nil {
		return err
	}
	delete(h.book.placements, k)
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
		if h.members.deregistered.Stale(r.Name, r.Generation) {
			return nil // older than the cluster's deregistration
		}
		m := h.members.get(r.Name)
		if m.reg.Generation > r.Generation {
			return nil
		}
		old := m.reg
		m.reg = r
		if r.Spec.PullMode() && !old.Spec.PullMode() {
			// Its own executord now reads its assignments, which were
			// not written while it was pushed to. On failure the
			// redelivery must see the turn again.
			if err := h.assignAllTo(ctx, e, r.Name); err != nil {
				m.reg = old
				return err
			}
		}
	case events.TypeClusterDeregistered:
		var r events.ClusterRegistration
		if err := events.Decode(e, &r); err != nil {
			return err
		}
		if m := h.members.byName[r.Name]; m != nil && events.Outdated(r.Generation, m.reg.Generation) {
			return nil // a registration newer than this deregistration holds
		}
		h.members.forget(r)
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
		if old := h.members.get(c.Cluster).capacity; old != nil && old.ObservedAt.After(c.ObservedAt) {
			return nil
		}
		h.members.get(c.Cluster).capacity = &c
		h.reserved.releaseReported(c, h.now())
	}
	h.members.changed()
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

// HandleHealthSnapshot resyncs every member's health from healthd's
// periodic snapshot; a report that differs from the one held is handled as
// that cluster's health change.
func (h *Handler) HandleHealthSnapshot(ctx context.Context, e events.Event) error {
	var s events.HealthSnapshot
	if err := events.Decode(e, &s); err != nil {
		return err
	}
	var changed []string
	before := map[string]*events.ClusterHealth{}
	for _, c := range s.Clusters {
		old := h.members.byName[c.Cluster]
		if old == nil || old.reg.Generation == 0 {
			continue // not registered (any more)
		}
		if old.health != nil && sameHealth(*old.health, c) {
			continue
		}
		prev := old.health
		if h.recordHealth(c) {
			changed = append(changed, c.Cluster)
			before[c.Cluster] = prev
		}
	}
	if len(changed) == 0 {
		return nil
	}
	h.members.changed()
	err := h.rescheduleAfterClusterChange(ctx, e)
	for _, c := range changed {
		if err != nil {
			break
		}
		err = h.evaluateFailoverOn(ctx, e, c)
	}
	if err != nil {
		// Not all done: the health held goes back to what it was, so that
		// the redelivery sees the change again and does it (it found the
		// same health and answered, and the reschedule waited for the
		// next change).
		for name, prev := range before {
			h.members.get(name).health = prev
		}
		h.members.changed()
	}
	return err
}

// HandleWorkStatus records a template's health in one cluster and looks at
// the template's failover rules again.
func (h *Handler) HandleWorkStatus(ctx context.Context, e events.Event) error {
	var st events.WorkStatus
	if err := events.Decode(e, &st); err != nil {
		return err
	}
	if st.Key.Kind == "" || st.Cluster == "" {
		return events.Permanent(fmt.Errorf("work status without a key or cluster"))
	}
	if !h.recordWork(st, events.Type(e.Type()) == events.TypeWorkDeleted) {
		return nil
	}
	p, placed := h.book.placements[st.Key]
	h.reserved.running(st, p)
	if !placed {
		return nil
	}
	return h.evaluateFailover(ctx, e, st.Key)
}

// recordHealth keeps a member's health report unless a newer one is held,
// and sets its readiness gauge.
func (h *Handler) recordHealth(c events.ClusterHealth) bool {
	if !h.members.recordHealth(c) {
		return false
	}
	ready := 0.0
	if c.Ready {
		ready = 1
	}
	h.metrics.members.WithLabelValues(c.Cluster).Set(ready)
	return true
}

// recordWork keeps what failover reads of a work status; false when the
// status is older than the one held.
func (h *Handler) recordWork(st events.WorkStatus, deleted bool) bool {
	var bound *events.Binding
	if b, ok := h.book.bindings[st.Key]; ok {
		bound = &b
	}
	return h.work.record(st, deleted, bound, h.now)
}
