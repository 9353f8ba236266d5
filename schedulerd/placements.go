package schedulerd

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/schedulerd/core"
)

// placementBook holds the live bindings (the latest revision of each
// template's) and the last placement published for each template, as
// remembered (without its explanation).
type placementBook struct {
	bindings map[events.ObjectKey]events.Binding
	// specs decodes bindings: those of one policy share one decoded spec.
	specs      events.SpecCache
	placements map[events.ObjectKey]events.PlacementDecision
	// removed: the revision of each removed template's binding.removed,
	// by key: a binding of that revision or older is a late redelivery
	// (HandleBindingChanged), rebuilt from the binding subjects.
	removed events.Tombstones
	// arrival: when each binding's latest revision arrived (a counter),
	// the tie-break of equal priorities in queue order.
	arrival map[events.ObjectKey]uint64
	next    uint64
	// unread: the latest binding.changed of each template another
	// instance decides, kept as it arrived: decoded only if this one takes
	// its partition over (TakeOver), so an instance pays for decoding its
	// own share of the bindings alone.
	unread map[events.ObjectKey]unreadBinding
}

// unreadBinding is a binding event kept undecoded, with its position in
// its stream.
type unreadBinding struct {
	event    events.Event
	sequence uint64
}

func newPlacementBook() placementBook {
	return placementBook{bindings: map[events.ObjectKey]events.Binding{}, placements: map[events.ObjectKey]events.PlacementDecision{},
		arrival: map[events.ObjectKey]uint64{}, unread: map[events.ObjectKey]unreadBinding{}}
}

// previous is k's last placement, or nil.
func (pb *placementBook) previous(k events.ObjectKey) *events.PlacementDecision {
	if last, ok := pb.placements[k]; ok {
		return &last
	}
	return nil
}

// arrived stamps k's binding as the latest arrival.
func (pb *placementBook) arrived(k events.ObjectKey) {
	pb.next++
	pb.arrival[k] = pb.next
}

// boundKeys returns the keys of the bindings keep takes in queue order
// (core.QueueOrder: schedule priority descending, then arrival, then key):
// pending work is decided highest priority first, and never in map order.
func (pb *placementBook) boundKeys(keep func(events.ObjectKey, events.Binding) bool) []events.ObjectKey {
	q := make([]core.Queued, 0, len(pb.bindings))
	for k, b := range pb.bindings {
		if keep(k, b) {
			q = append(q, core.Queued{Key: k, Priority: b.SchedulePriority, Arrival: pb.arrival[k]})
		}
	}
	core.QueueOrder(q)
	keys := make([]events.ObjectKey, len(q))
	for i := range q {
		keys[i] = q[i].Key
	}
	return keys
}

func (h *Handler) rescheduleAfterClusterChange(ctx context.Context, cause events.Event) error {
	keys := h.book.boundKeys(func(k events.ObjectKey, b events.Binding) bool {
		return core.FollowsClusterChanges(&b, h.book.previous(k), h.members.gone)
	})
	for _, k := range keys {
		if err := h.schedule(ctx, cause, k); err != nil {
			return err
		}
	}
	return nil
}

// schedule decides one binding and publishes the placement if it changed.
func (h *Handler) schedule(ctx context.Context, cause events.Event, k events.ObjectKey) error {
	return h.decide(ctx, cause, k, nil)
}

// decide is schedule with the binding's evictions given (nil: the ones its
// current placement carries); core.Decide holds the rules.
func (h *Handler) decide(ctx context.Context, cause events.Event, k events.ObjectKey, evs []events.Eviction) error {
	b, ok := h.book.bindings[k]
	if !ok || !h.owns(k) {
		return nil
	}
	last, hadLast := h.book.placements[k]
	var before []events.TargetCluster
	var replaced *events.PlacementDecision
	if hadLast {
		before, replaced = last.Clusters, &last
	}
	// An explicit reschedule newer than the last decision asks for a fresh
	// one (reference §1.1 rule 3, §2.5).
	r := b.RescheduleRequestedAt
	fresh := r != nil && (!hadLast || r.After(last.DecidedAt))
	var p events.PlacementDecision
	for claims := 1; ; claims++ {
		h.ledger.expire(&h.reserved, h.now())
		snap := h.members.snapshotFor(b, &h.reserved)
		p = h.placed.Decide(h.sched, core.DecideInput{Binding: b, Snapshot: snap, Previous: h.book.previous(k), Evictions: evs, Fresh: fresh, Now: h.now()})
		p.Binding = &b
		if hadLast && samePlacement(last, p) {
			h.metrics.decisions.WithLabelValues("unchanged").Inc()
			return nil
		}
		// What the placement adds where capacity limits it is claimed in
		// the ledger shared with the other instances before it is
		// published; if what they reserved meanwhile leaves too little
		// room, decide again.
		err := h.ledger.claim(ctx, &h.reserved, b, before, p.Clusters, h.members.reportsCapacity, h.members.fits, h.now())
		if err == nil {
			break
		}
		if !errors.Is(err, errLedgerMoved) {
			return err
		}
		h.metrics.decisions.WithLabelValues("ledger_moved").Inc()
		if claims == maxClaims {
			return events.RetryAfter(err, ledgerFlush)
		}
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
	if err := h.assign(ctx, out, events.TypeWorkAssigned, p, replaced); err != nil {
		return err
	}
	h.reserved.reserve(b, before, p.Clusters, h.now())
	h.book.placements[k] = remembered(p)
	// A new placement (new clusters, a changed policy and its tolerations)
	// may change what failover must do: look on the next tick.
	h.queue.due[k] = h.now()
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
		b = append(b, " held="...)
		b = append(b, e.Held...)
	}
	return string(b)
}
