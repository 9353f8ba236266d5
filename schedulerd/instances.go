package schedulerd

import (
	"context"
	"slices"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/schedulerd/core"
)

// SetOwner makes the handler decide only the templates owns says are this
// instance's (their partition's lease, DESIGN.md §7); nil: every template.
// Every event is still read into the state, whoever owns its template, so
// that an instance taking a partition over holds its bindings already.
func (h *Handler) SetOwner(owns func(events.ObjectKey) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.owner = owns
}

// settled returns once the decision running now, if any, is over (or ctx
// ends): those that follow ask owns, which no longer answers yes for the
// partitions being given up.
func (h *Handler) settled(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		h.mu.Lock()
		h.mu.Unlock() //nolint:staticcheck // an empty critical section: waiting for the running decision
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// everyKey keeps every template (Reconcile at start-up).
func everyKey(events.ObjectKey) bool { return true }

// owns reports whether this instance decides k now.
func (h *Handler) owns(k events.ObjectKey) bool { return h.owner == nil || h.owner(k) }

// TakeOver catches up on the templates taken says this instance has just
// taken over: it adopts their last placements as stored (another instance
// made them; removed ones are forgotten), then decides what their owner
// left undone (Reconcile).
func (h *Handler) TakeOver(ctx context.Context, stored []events.PlacementDecision, removed []events.ObjectKey, taken func(events.ObjectKey) bool) error {
	h.mu.Lock()
	h.readUnread(taken)
	for _, p := range stored {
		// What this instance decided since it took the partition is newer.
		if cur, ok := h.book.placements[p.Key]; !taken(p.Key) || ok && (cur.BindingRevision > p.BindingRevision || !p.DecidedAt.After(cur.DecidedAt)) {
			continue
		}
		h.book.placements[p.Key] = remembered(p)
		if b, ok := h.book.bindings[p.Key]; ok {
			h.placed.Restore(&b, p.Clusters)
		}
	}
	for _, k := range removed {
		if taken(k) {
			delete(h.book.placements, k)
			h.placed.Forget(k)
		}
	}
	h.mu.Unlock()
	return h.Reconcile(ctx, taken)
}

// readUnread decodes the bindings left unread (placementBook.unread) of
// the templates taken, keeping those newer than what the state holds and
// not removed since; a binding that cannot be decoded was dead-lettered by
// the instance that decided it, and is dropped.
func (h *Handler) readUnread(taken func(events.ObjectKey) bool) {
	for k, u := range h.book.unread {
		if !taken(k) {
			continue
		}
		delete(h.book.unread, k)
		b, err := h.book.specs.DecodeBinding(u.event)
		if err != nil || b.Key != k || h.book.removed.Stale(k.String(), b.Revision) {
			continue
		}
		if old, ok := h.book.bindings[k]; ok && old.Revision >= b.Revision {
			continue
		}
		b.Reencode()
		h.book.bindings[k] = b
		h.book.arrived(k)
	}
}

// Reconcile decides, among the templates keep takes and this instance
// owns, every binding whose latest revision has no placement yet (the
// work a crash or a move of ownership interrupted) and every one that
// follows cluster changes (members may have changed meanwhile), withdraws
// the placements of removed templates, and has failover look at each on
// the next tick. Unchanged decisions publish nothing.
func (h *Handler) Reconcile(ctx context.Context, keep func(events.ObjectKey) bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	var orphans []events.ObjectKey
	for k, p := range h.book.placements {
		if !keep(k) || !h.owns(k) {
			continue
		}
		h.queue.due[k] = now
		// Removed while nobody owned it: the tombstone is newer than what
		// was placed.
		if _, bound := h.book.bindings[k]; !bound && h.book.removed.Generation(k.String()) >= p.BindingRevision {
			orphans = append(orphans, k)
		}
	}
	slices.SortFunc(orphans, func(a, b events.ObjectKey) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range orphans {
		last := h.book.placements[k]
		if err := h.withdraw(ctx, events.Event{}, k, last.Generation, h.book.removed.Generation(k.String())); err != nil {
			return err
		}
	}
	keys := h.book.boundKeys(func(k events.ObjectKey, b events.Binding) bool {
		if !keep(k) || !h.owns(k) {
			return false
		}
		p, ok := h.book.placements[k]
		return !ok || p.BindingRevision < b.Revision || core.FollowsClusterChanges(&b, h.book.previous(k), h.members.gone)
	})
	for _, k := range keys {
		if err := h.schedule(ctx, events.Event{}, k); err != nil {
			return err
		}
	}
	return nil
}
