package executord

import (
	"context"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/events"
)

// resyncLoop retries the held operations, then reads back the status of
// every object this cluster holds and re-applies objects removed or
// changed by hand, every resync interval.
func (w *worker) resyncLoop(ctx context.Context) {
	t := w.d.deps.Clock.NewTicker(w.d.cfg.ResyncInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		w.retryHeld(ctx, w.d.now())
		w.resync(ctx)
	}
}

// resync reads every object back without holding the worker's lock (the
// reads are rate-limited and must not starve placements), then takes the
// lock per object to publish its status or repair drift, skipping objects
// whose placement changed meanwhile. A kept copy (evicted, not purged) is
// read back but never repaired; held and removed objects are left to the
// held retries; an object whose manifest the member refused is left alone.
func (w *worker) resync(ctx context.Context) {
	type item struct {
		key     events.ObjectKey
		p       events.PlacementDecision
		fate    fate
		desired map[string]any
	}
	w.mu.Lock()
	items := make([]item, 0, len(w.work))
	for key, st := range w.work {
		p, ok := w.placed[key]
		if !ok || p.Binding == nil || st.Phase == events.WorkDeleted || st.Phase == events.WorkDeleting || w.held[key] != nil ||
			st.Reason == events.WorkReasonRefused {
			continue // the member refused this manifest: nothing to read back or repair until a new placement
		}
		if f, _, _ := disposition(p, w.name); f != fateRemove {
			items = append(items, item{key, p, f, w.desired[key]})
		}
	}
	w.mu.Unlock()
	for _, it := range items {
		if ctx.Err() != nil {
			return
		}
		mapping, err := w.mapping(schema.FromAPIVersionAndKind(it.p.Binding.APIVersion, it.key.Kind))
		if err != nil {
			continue
		}
		cur, err := w.resource(mapping, it.key.Namespace).Get(ctx, it.key.Name, metav1.GetOptions{})
		drift := ""
		switch {
		case it.fate == fateKeep:
		case apierrors.IsNotFound(err):
			drift = "the object (deleted)"
		case err == nil && it.desired != nil:
			drift = Drift(it.desired, cur.Object)
		}
		w.mu.Lock()
		st, ok := w.work[it.key]
		p, placed := w.placed[it.key]
		if !ok || !placed || p.BindingRevision != it.p.BindingRevision || !p.DecidedAt.Equal(it.p.DecidedAt) ||
			st.Phase == events.WorkDeleted || st.Phase == events.WorkDeleting || w.held[it.key] != nil {
			w.mu.Unlock() // handled meanwhile: the new placement decides
			continue
		}
		switch {
		case drift != "":
			w.log.Info("drift: the member object was changed by hand, applying again", zap.String("workload", it.key.String()), zap.String("field", drift))
			_, replicas, _ := disposition(p, w.name)
			err := w.apply(ctx, events.Event{}, p, replicas, drift)
			_ = w.settle(ctx, events.Event{}, it.key, fateApply, p.Generation, p.BindingRevision, err)
		case err == nil && st.Phase != events.WorkFailed:
			_ = w.publishObserved(ctx, events.Event{}, st, cur, preservationRules(p.Binding), interpretationOf(p.Binding))
		}
		w.mu.Unlock()
	}
}
