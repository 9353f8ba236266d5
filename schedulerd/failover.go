package schedulerd

import (
	"context"
	"slices"
	"sort"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

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

// failoverQueue says when each template's failover rules must be looked
// at again, and paces evictions.
type failoverQueue struct {
	due map[events.ObjectKey]time.Time
	// limiter: nil when evictions are not limited.
	limiter *rate.Limiter
}

func newFailoverQueue(l EvictionLimit) failoverQueue {
	return failoverQueue{due: map[events.ObjectKey]time.Time{}, limiter: limiterOf(l)}
}

func limiterOf(l EvictionLimit) *rate.Limiter {
	if l.PerSecond <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(l.PerSecond), max(l.Burst, 1))
}

// SetEvictionLimit replaces the eviction rate limit (zero PerSecond: none).
func (h *Handler) SetEvictionLimit(l EvictionLimit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue.limiter = limiterOf(l)
}

// SetLogger gives the handler a logger for failover decisions.
func (h *Handler) SetLogger(l *zap.Logger) { h.log = l }

// Tick evaluates the templates whose toleration, grace period or deferred
// eviction is due. The daemon calls it every --failover-tick (250 ms); tests call it with
// the handler's clock moved on.
func (h *Handler) Tick(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	owedErr := h.history.sendOwed(ctx, h.pub)
	now := h.now()
	var keys []events.ObjectKey
	for k, at := range h.queue.due {
		if !at.After(now) {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		delete(h.queue.due, k)
		if err := h.evaluateFailover(ctx, events.Event{}, k); err != nil {
			h.queue.due[k] = now // a failed publish is tried again on the next tick
			return err
		}
	}
	return owedErr
}

// evaluateFailoverOn looks again at every template placed on, or evicted
// from, the cluster.
func (h *Handler) evaluateFailoverOn(ctx context.Context, cause events.Event, cluster string) error {
	var keys []events.ObjectKey
	for k, p := range h.book.placements {
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

// evaluateFailover applies the failover rules to one template and carries
// out what is due: evictions (as the rate limit allows) and purges become a
// new placement and failover history events.
func (h *Handler) evaluateFailover(ctx context.Context, cause events.Event, k events.ObjectKey) error {
	p, placed := h.book.placements[k]
	b, bound := h.book.bindings[k]
	if !placed || !bound || !h.owns(k) {
		delete(h.queue.due, k)
		return nil
	}
	now := h.now()
	view := h.members.failoverView()
	v := failover.Evaluate(failover.Input{Now: now, Binding: b, Placement: p, Health: view.health, Taints: view.taints, Work: h.work.statuses[k], RuleSince: h.work.ruleSince[k]})
	next := v.NextCheck
	var evicts []events.Eviction
	for _, e := range v.Evict {
		if h.queue.limiter != nil && !h.queue.limiter.AllowN(now, 1) {
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
		delete(h.queue.due, k)
	} else {
		h.queue.due[k] = next
	}
	if len(evicts) == 0 && len(v.Purge) == 0 && len(v.Hold) == 0 {
		return nil
	}
	evs := slices.Clone(p.Evictions)
	var purged, held []events.Eviction
	for _, pu := range v.Purge {
		for i := range evs {
			if evs[i].Cluster == pu.Cluster && evs[i].PurgedAt == nil {
				t := now.UTC()
				evs[i].PurgedAt, evs[i].PurgeReason, evs[i].Held = &t, pu.Reason, ""
				purged = append(purged, evs[i])
			}
		}
	}
	// A copy held past its grace period is reported in the placement
	// (flotilla get work, explain) and the log; it is no step of the
	// failover history, which records only moves and deletions.
	for _, ho := range v.Hold {
		for i := range evs {
			if evs[i].Cluster == ho.Cluster && evs[i].Kept() {
				evs[i].Held = ho.Why
				held = append(held, evs[i])
			}
		}
	}
	evs = append(evs, evicts...)
	from := p.Clusters
	if err := h.decide(ctx, cause, k, evs); err != nil {
		return err
	}
	to := h.book.placements[k]
	if samePlacement(p, to) {
		return nil // nothing changed (cannot happen for an eviction): no history
	}
	for _, e := range held {
		h.logf("kept: no replacement", k, e, from, to.Clusters)
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
	h.queue.due[k] = now
	return nil
}

func (h *Handler) logf(what string, k events.ObjectKey, e events.Eviction, from, to []events.TargetCluster) {
	if h.log == nil {
		return
	}
	h.log.Info(what, zap.String("workload", k.String()), zap.String("cluster", e.Cluster), zap.String("reason", e.Reason),
		zap.String("message", e.Message), zap.String("purge", e.PurgeReason), zap.String("held", e.Held), zap.String("from", events.FormatTargets(from)), zap.String("to", events.FormatTargets(to)))
}
