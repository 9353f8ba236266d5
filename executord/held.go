package executord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/flotilla-io/flotilla/events"
)

// An apply or a removal that the member cannot take now (it does not
// answer, times out, is busy, or does not serve the kind yet) is held: the
// placement that asked for it is acknowledged, and the worker retries it
// from its resync loop until it is carried out or a later placement decides
// otherwise. The consumer's redeliveries would give up after MaxDeliver
// attempts and dead-letter the placement, which for a member that is down
// for minutes would lose a purge or an apply.
//
// Nothing is persisted for this: after a restart the catch-up over the
// latest placement of every template (natsbus.HandleLatest) decides again,
// and a removal is carried out because the cluster's last work status is
// not Deleted (a held removal publishes a Deleting status).

// held is one held operation of a template.
type held struct {
	remove bool
	// gen and rev are those of the placement that asked for a removal (for
	// its Deleted status when the placement was removed altogether).
	gen, rev int64
	since    time.Time
	failures int
	next     time.Time  // no retry before
	err      string     // the first error, in the status and the log
	class    errorClass // of the last failure: how long the backoff grows
}

func (h *held) op() string {
	if h.remove {
		return "remove"
	}
	return "apply"
}

// memberError is an error of the member cluster that a later attempt may
// not meet (transient, or forbidden until the member's admin acts).
// Operations failing with it are held.
type memberError struct {
	class errorClass
	err   error
}

// newMemberError wraps err, classified.
func newMemberError(err error) *memberError { return &memberError{class: classify(err), err: err} }

func (e *memberError) Error() string { return e.err.Error() }
func (e *memberError) Unwrap() error { return e.err }

func isMemberError(err error) bool {
	var m *memberError
	return errors.As(err, &m)
}

// unreachable reports whether err says the member did not answer at all
// (a network error, a timeout, 503 or 429): every other request would meet
// it too, so a retry pass stops there. An API error about one object
// (a conflict, a webhook's refusal, a kind not served) does not.
func unreachable(err error) bool {
	if meta.IsNoMatchError(err) {
		return false
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
	}
	return true
}

// retryDelay is how long a held operation waits after its n-th failure:
// base (the resync interval), doubled per failure, at most 10 × base for a
// transient error; at most forbiddenRetryCap (or 10 × base if longer) for
// any other, which only the member's admin can fix.
func retryDelay(failures int, base time.Duration, class errorClass) time.Duration {
	limit := 10 * base
	if class != transient {
		limit = max(limit, forbiddenRetryCap)
	}
	d := base
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// settle books an operation's outcome: a member error holds the operation
// and is answered with nil, so the event is acknowledged; success releases
// whatever was held for the key. Other errors are returned as they are.
// Callers hold w.mu.
func (w *worker) settle(ctx context.Context, cause events.Event, key events.ObjectKey, f fate, gen, rev int64, err error) error {
	switch {
	case err == nil:
		w.release(key, f)
		return nil
	case isMemberError(err):
		return w.hold(ctx, cause, key, f == fateRemove, gen, rev, err)
	}
	return err
}

// hold records (or, for one already held, counts another failure of) an
// operation the member could not take. A new hold is logged once; a held
// removal is shown as a Deleting work status, which also makes a restarted
// executord remove the object (its last status is not Deleted).
func (w *worker) hold(ctx context.Context, cause events.Event, key events.ObjectKey, remove bool, gen, rev int64, err error) error {
	now := w.d.now()
	h, ok := w.held[key]
	if !ok || h.remove != remove {
		h = &held{remove: remove, since: now, err: err.Error()}
		w.held[key] = h
		w.log.Info("held until the member answers", zap.String("workload", key.String()), zap.String("op", h.op()), zap.Error(err))
	}
	h.gen, h.rev = gen, rev
	h.failures++
	h.class = transient
	var me *memberError
	if errors.As(err, &me) {
		h.class = me.class
	}
	h.next = now.Add(retryDelay(h.failures, w.d.cfg.ResyncInterval, h.class))
	w.gauge()
	if !remove {
		return nil // applyError published the Failed status
	}
	last, ok := w.work[key]
	if !ok || last.Phase == events.WorkDeleted {
		return nil
	}
	st := last
	if gen != 0 || rev != 0 { // 0 for a dependency released by its owner: keep its own
		st.Generation, st.BindingRevision = gen, rev
	}
	st.Phase = events.WorkDeleting
	st.Message = fmt.Sprintf("removal held until %s answers: %s", w.name, h.err)
	if h.class == forbidden {
		st.Message = "removal held: " + forbiddenMessage(err, w.name)
	}
	return w.publish(ctx, cause, st)
}

// release forgets what was held for key: it was carried out, or the
// latest placement no longer asks for it (f says what it asks now).
func (w *worker) release(key events.ObjectKey, f fate) {
	h, ok := w.held[key]
	if !ok {
		return
	}
	delete(w.held, key)
	w.gauge()
	outcome := "done"
	if h.remove != (f == fateRemove) {
		outcome = "dropped: the placement now says " + f.String()
	}
	w.log.Info("no longer held", zap.String("workload", key.String()), zap.String("op", h.op()), zap.String("outcome", outcome),
		zap.Duration("held_for", w.d.now().Sub(h.since)))
}

// gauge sets the held-operation gauges of the cluster.
func (w *worker) gauge() {
	var removals, applies int
	for _, h := range w.held {
		if h.remove {
			removals++
		} else {
			applies++
		}
	}
	w.d.metrics.heldRemovals.WithLabelValues(w.name).Set(float64(removals))
	w.d.metrics.heldApplies.WithLabelValues(w.name).Set(float64(applies))
}

// attemptTimeout bounds one retry of a held operation (a member that does
// not answer must not hold the worker's lock for long).
const attemptTimeout = 15 * time.Second

// retryHeld retries the held operations that are due at now, in key order.
// The first error saying the member does not answer ends the pass (the
// rest would meet it too); once the member has answered, every held
// operation that met a transient error is tried in the same pass, due or
// not, so a member that comes back gets its held removals without waiting
// out their backoff (a forbidden one waits out its long backoff: the
// member answering says nothing about its rights). Each
// attempt takes the worker's lock on its own, so placements are not kept
// waiting behind a long pass.
func (w *worker) retryHeld(ctx context.Context, now time.Time) {
	w.mu.Lock()
	keys := make([]events.ObjectKey, 0, len(w.held))
	for k := range w.held {
		keys = append(keys, k)
	}
	w.mu.Unlock()
	slices.SortFunc(keys, func(a, b events.ObjectKey) int { return strings.Compare(a.String(), b.String()) })
	answered := false
	for _, k := range keys {
		if ctx.Err() != nil {
			return
		}
		if tried, err := w.retry(ctx, k, now, answered); tried {
			if err != nil && unreachable(err) {
				return
			}
			answered = true
		}
	}
}

// retry attempts one held operation again; tried is false when it was not
// due (or no longer held). The operation is whatever the latest placement
// asks for now.
func (w *worker) retry(ctx context.Context, key events.ObjectKey, now time.Time, evenIfEarly bool) (tried bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h, ok := w.held[key]
	if !ok || ((!evenIfEarly || h.class != transient) && now.Before(h.next)) {
		return false, nil
	}
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	f, err := w.converge(actx, events.Event{}, key, h.gen, h.rev)
	switch {
	case err == nil || isMemberError(err):
		_ = w.settle(ctx, events.Event{}, key, f, h.gen, h.rev, err)
	case events.IsPermanent(err):
		w.log.Warn("held operation cannot be carried out", zap.String("workload", key.String()), zap.String("op", h.op()), zap.Error(err))
		w.release(key, f)
	default:
		// Publishing the outcome failed: keep it held and try again.
		_ = w.hold(ctx, events.Event{}, key, h.remove, h.gen, h.rev, err)
	}
	return true, err
}
