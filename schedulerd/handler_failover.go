package schedulerd

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/schedulerd/failover"
)

// The failover shell: it keeps what failover.Evaluate reads (work health per
// template and cluster, cluster health and taints), runs the evaluation when
// a report changes or a toleration runs out, rate-limits evictions, and
// carries out the verdict as a new placement plus failover history events.

// EvictionLimit bounds evictions per second, so that a region outage does
// not stampede the remaining clusters: evictions beyond it wait for the next
// token (the template is looked at again when one is due).
type EvictionLimit struct {
	PerSecond float64
	Burst     int
}

// SetEvictionLimit replaces the eviction rate limit (zero PerSecond: none).
func (h *Handler) SetEvictionLimit(l EvictionLimit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.PerSecond <= 0 {
		h.limiter = nil
		return
	}
	h.limiter = rate.NewLimiter(rate.Limit(l.PerSecond), max(l.Burst, 1))
}

// SetLogger gives the handler a logger for failover decisions.
func (h *Handler) SetLogger(l *zap.Logger) { h.log = l }

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
	h.reservationRunning(st)
	if _, placed := h.placements[st.Key]; !placed {
		return nil
	}
	return h.evaluateFailover(ctx, e, st.Key)
}

// recordWork keeps what failover reads of a work status; false when the
// status is older than the one held.
func (h *Handler) recordWork(st events.WorkStatus, deleted bool) bool {
	m := h.work[st.Key]
	if old, ok := m[st.Cluster]; ok && old.UpdatedAt.After(st.UpdatedAt) {
		return false
	}
	if deleted {
		delete(m, st.Cluster)
		if len(m) == 0 {
			delete(h.work, st.Key)
		}
		h.noteRules(st, false)
		return true
	}
	defer h.noteRules(st, true)
	if m == nil {
		m = map[string]events.WorkStatus{}
		h.work[st.Key] = m
	}
	m[st.Cluster] = events.WorkStatus{Key: st.Key, Cluster: st.Cluster, Generation: st.Generation, BindingRevision: st.BindingRevision,
		Phase: st.Phase, Replicas: st.Replicas, ReadyReplicas: st.ReadyReplicas, Health: st.Health, AvailableReplicas: st.AvailableReplicas,
		UnavailableReplicas: st.UnavailableReplicas, UnhealthySince: st.UnhealthySince, PreservedState: st.PreservedState, UpdatedAt: st.UpdatedAt}
	return true
}

// noteRules keeps since when the template's applicationFailureDetection
// rules have held in the status's cluster: from the first status they hold
// for (after a schedulerd restart: the last status read back, which is no
// earlier than when they began to hold, so a toleration is never cut short).
func (h *Handler) noteRules(st events.WorkStatus, present bool) {
	holds := false
	if b, ok := h.bindings[st.Key]; ok && present {
		_, holds = failover.RulesHold(failover.Behavior(b.Spec), st)
	}
	m := h.ruleSince[st.Key]
	if !holds {
		delete(m, st.Cluster)
		if len(m) == 0 {
			delete(h.ruleSince, st.Key)
		}
		return
	}
	if _, ok := m[st.Cluster]; ok {
		return
	}
	if m == nil {
		m = map[string]time.Time{}
		h.ruleSince[st.Key] = m
	}
	at := st.UpdatedAt
	if at.IsZero() {
		at = h.now()
	}
	m[st.Cluster] = at
}

// Tick evaluates the templates whose toleration, grace period or deferred
// eviction is due. The daemon calls it every --failover-tick (250 ms); tests call it with
// the handler's clock moved on.
func (h *Handler) Tick(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	owedErr := h.sendOwedHistory(ctx)
	now := h.now()
	var keys []events.ObjectKey
	for k, at := range h.due {
		if !at.After(now) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		delete(h.due, k)
		if err := h.evaluateFailover(ctx, events.Event{}, k); err != nil {
			h.due[k] = now // a failed publish is tried again on the next tick
			return err
		}
	}
	return owedErr
}

// evaluateFailoverOn looks again at every template placed on, or evicted
// from, the cluster.
func (h *Handler) evaluateFailoverOn(ctx context.Context, cause events.Event, cluster string) error {
	var keys []events.ObjectKey
	for k, p := range h.placements {
		if involves(p, cluster) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		if err := h.evaluateFailover(ctx, cause, k); err != nil {
			return err
		}
	}
	return nil
}

func involves(p events.PlacementDecision, cluster string) bool {
	for _, c := range p.Clusters {
		if c.Name == cluster {
			return true
		}
	}
	for _, e := range p.Evictions {
		if e.Cluster == cluster {
			return true
		}
	}
	return false
}

// clusterView is the cluster health and taints failover reads, shared by
// the evaluations between two cluster changes.
type clusterView struct {
	health map[string]*events.ClusterHealth
	taints map[string][]corev1.Taint
}

func (h *Handler) failoverView() *clusterView {
	if h.view != nil {
		return h.view
	}
	v := &clusterView{health: map[string]*events.ClusterHealth{}, taints: map[string][]corev1.Taint{}}
	for n, m := range h.members {
		v.health[n] = m.health
		var ts []corev1.Taint
		ts = append(ts, m.reg.Spec.Taints...)
		if m.health != nil {
			ts = append(ts, m.health.Taints...)
		}
		v.taints[n] = ts
	}
	h.view = v
	return v
}

// evaluateFailover applies the failover rules to one template and carries
// out what is due: evictions (as the rate limit allows) and purges become a
// new placement and failover history events.
func (h *Handler) evaluateFailover(ctx context.Context, cause events.Event, k events.ObjectKey) error {
	p, placed := h.placements[k]
	b, bound := h.bindings[k]
	if !placed || !bound {
		delete(h.due, k)
		return nil
	}
	now := h.now()
	view := h.failoverView()
	v := failover.Evaluate(failover.Input{Now: now, Binding: b, Placement: p, Health: view.health, Taints: view.taints, Work: h.work[k], RuleSince: h.ruleSince[k]})
	next := v.NextCheck
	var evicts []events.Eviction
	for _, e := range v.Evict {
		if h.limiter != nil && !h.limiter.AllowN(now, 1) {
			retry := now.Add(time.Second)
			if next.IsZero() || retry.Before(next) {
				next = retry
			}
			h.metrics.evictionsDeferred.Inc()
			continue
		}
		evicts = append(evicts, e)
	}
	if next.IsZero() {
		delete(h.due, k)
	} else {
		h.due[k] = next
	}
	if len(evicts) == 0 && len(v.Purge) == 0 {
		return nil
	}
	evs := slices.Clone(p.Evictions)
	var purged []events.Eviction
	for _, pu := range v.Purge {
		for i := range evs {
			if evs[i].Cluster == pu.Cluster && evs[i].Kept() {
				t := now.UTC()
				evs[i].PurgedAt, evs[i].PurgeReason = &t, pu.Reason
				purged = append(purged, evs[i])
			}
		}
	}
	evs = append(evs, evicts...)
	from := p.Clusters
	if err := h.decide(ctx, cause, k, evs); err != nil {
		return err
	}
	to := h.placements[k]
	if samePlacement(p, to) {
		return nil // nothing changed (cannot happen for an eviction): no history
	}
	for _, e := range evicts {
		h.metrics.evictions.WithLabelValues(e.Reason).Inc()
		h.logf("evicted", k, e, from, to.Clusters)
		if err := h.publishHistory(ctx, cause, events.TypeFailoverEvicted, events.FailoverRecord{Key: k, Eviction: e, From: from, To: to.Clusters, Error: to.Error, At: now.UTC()}); err != nil {
			return err
		}
	}
	for _, e := range purged {
		h.metrics.purges.WithLabelValues(e.PurgeReason).Inc()
		h.logf("purge", k, e, from, to.Clusters)
		if err := h.publishHistory(ctx, cause, events.TypeFailoverPurged, events.FailoverRecord{Key: k, Eviction: e, From: from, To: to.Clusters, At: now.UTC()}); err != nil {
			return err
		}
	}
	// The new placement starts its own tolerations and grace periods: look
	// again on the next tick.
	h.due[k] = now
	return nil
}

func (h *Handler) publishHistory(ctx context.Context, cause events.Event, t events.Type, r events.FailoverRecord) error {
	out, err := historyEvent(h.source, t, r)
	if err != nil {
		return events.Permanent(err)
	}
	if cause.ID() != "" {
		events.CausedBy(&out, cause)
	}
	h.sendHistory(ctx, owedRecord{events.FailoverSubject(r.Key), out})
	return nil
}

// historyEvent is a failover record as an event. Its id depends only on
// the type, the template, the cluster and the time of the step, so a record
// sent again (owed, recovered) is stored once.
func historyEvent(source string, t events.Type, r events.FailoverRecord) (events.Event, error) {
	at := r.Eviction.EvictedAt
	if r.Eviction.PurgedAt != nil && t == events.TypeFailoverPurged {
		at = *r.Eviction.PurgedAt
	}
	return events.NewWithID(events.DeterministicID(string(t), r.Key.String(), r.Eviction.Cluster, at.UTC().Format(time.RFC3339Nano)),
		t, source, r.Key.String(), r)
}

// owedRecord is a failover history event whose publish failed after the
// placement it explains was stored.
type owedRecord struct {
	subject string
	event   events.Event
}

// sendHistory publishes a history record, or owes it: the placement that
// carries the step is already stored, so failing the step now would only
// lose the record (a redelivered cause finds nothing left to do). Owed
// records are sent again on every tick until stored. The publish waits for
// the store (history is rare): a deferred publish that failed would be
// dropped once a newer event, such as the next record of the same
// template, was sent on the subject.
func (h *Handler) sendHistory(ctx context.Context, o owedRecord) {
	if len(h.owed) > 0 {
		// Older records are still owed: the bus is away, and this one
		// must not be stored before them. The tick sends them in order.
		h.owed = append(h.owed, o)
		return
	}
	if err := h.pub.Publish(ctx, o.subject, o.event); err != nil {
		h.owed = append(h.owed, o)
		if h.log != nil {
			h.log.Warn("failover history record not stored; sending it again on the next tick", zap.String("subject", o.subject), zap.Error(err))
		}
	}
}

// sendOwedHistory sends the owed records again, in order, and stops at the
// first that fails (the bus is still away: one timeout per tick is enough).
func (h *Handler) sendOwedHistory(ctx context.Context) error {
	for len(h.owed) > 0 {
		if err := h.pub.Publish(ctx, h.owed[0].subject, h.owed[0].event); err != nil {
			return err
		}
		h.owed = h.owed[1:]
	}
	h.owed = nil
	return nil
}

// OweMissingHistory owes the failover records that the remembered
// placements' evictions imply and that are not among stored (ids of the
// records on the bus), except those older than notBefore (the stream may
// have dropped them). schedulerd calls it after a restart: a record whose
// publish failed just before the daemon stopped is sent then. A recovered
// record has no "from", and "to" is the placement when it was recovered.
// It returns how many it owes.
func (h *Handler) OweMissingHistory(stored map[string]bool, notBefore time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]events.ObjectKey, 0)
	for k, p := range h.placements {
		if len(p.Evictions) > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	n := 0
	for _, k := range keys {
		p := h.placements[k]
		for _, e := range p.Evictions {
			// A Directly eviction is purged as it is made: one record,
			// which says so. The others were kept at eviction and purged
			// by a later step with a record of its own.
			atEviction := e
			if e.PurgeMode != events.PurgeDirectly {
				atEviction.PurgedAt, atEviction.PurgeReason = nil, ""
			}
			steps := []events.FailoverRecord{{Key: k, Eviction: atEviction, To: p.Clusters, Error: p.Error, At: e.EvictedAt}}
			types := []events.Type{events.TypeFailoverEvicted}
			if e.PurgedAt != nil && e.PurgeMode != events.PurgeDirectly {
				steps = append(steps, events.FailoverRecord{Key: k, Eviction: e, To: p.Clusters, At: *e.PurgedAt})
				types = append(types, events.TypeFailoverPurged)
			}
			for i, r := range steps {
				if r.At.Before(notBefore) {
					continue
				}
				out, err := historyEvent(h.source, types[i], r)
				if err != nil || stored[out.ID()] {
					continue
				}
				h.owed = append(h.owed, owedRecord{events.FailoverSubject(k), out})
				n++
			}
		}
	}
	return n
}

func (h *Handler) logf(what string, k events.ObjectKey, e events.Eviction, from, to []events.TargetCluster) {
	if h.log == nil {
		return
	}
	h.log.Info(what, zap.String("workload", k.String()), zap.String("cluster", e.Cluster), zap.String("reason", e.Reason),
		zap.String("message", e.Message), zap.String("purge", e.PurgeReason), zap.String("from", events.FormatTargets(from)), zap.String("to", events.FormatTargets(to)))
}
