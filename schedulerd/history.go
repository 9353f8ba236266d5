package schedulerd

import (
	"context"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
)

// history sends failover history records in order, and owes the bus those
// it did not store yet (sent again on every tick).
type history struct {
	owed []owedRecord
}

// owedRecord is a failover history event whose publish failed after the
// placement it explains was stored.
type owedRecord struct {
	subject string
	event   events.Event
}

func (h *Handler) publishHistory(ctx context.Context, cause events.Event, t events.Type, r events.FailoverRecord) error {
	out, err := historyEvent(h.source, t, r)
	if err != nil {
		return events.Permanent(err)
	}
	if cause.ID() != "" {
		events.CausedBy(&out, cause)
	}
	if err := h.history.send(ctx, h.pub, owedRecord{events.FailoverSubject(r.Key), out}); err != nil && h.log != nil {
		h.log.Warn("failover history record not stored; sending it again on the next tick", zap.String("subject", events.FailoverSubject(r.Key)), zap.Error(err))
	}
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

// send publishes a history record, or owes it: the placement that carries
// the step is already stored, so failing the step now would only lose the
// record (a redelivered cause finds nothing left to do). It returns the
// publish's error, for the log, when it owes the record for that. The
// publish waits for the store (history is rare): a deferred publish that
// failed would be dropped once a newer event, such as the next record of
// the same template, was sent on the subject.
func (hi *history) send(ctx context.Context, pub events.Publisher, o owedRecord) error {
	if len(hi.owed) > 0 {
		// Older records are still owed: the bus is away, and this one
		// must not be stored before them. The tick sends them in order.
		hi.owed = append(hi.owed, o)
		return nil
	}
	if err := pub.Publish(ctx, o.subject, o.event); err != nil {
		hi.owed = append(hi.owed, o)
		return err
	}
	return nil
}

// sendOwed sends the owed records again, in order, and stops at the first
// that fails (the bus is still away: one timeout per tick is enough).
func (hi *history) sendOwed(ctx context.Context, pub events.Publisher) error {
	for len(hi.owed) > 0 {
		if err := pub.Publish(ctx, hi.owed[0].subject, hi.owed[0].event); err != nil {
			return err
		}
		hi.owed = hi.owed[1:]
	}
	hi.owed = nil
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
	for k, p := range h.book.placements {
		if len(p.Evictions) > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	n := 0
	for _, k := range keys {
		p := h.book.placements[k]
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
				h.history.owed = append(h.history.owed, owedRecord{events.FailoverSubject(k), out})
				n++
			}
		}
	}
	return n
}
