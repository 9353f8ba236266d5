package executord

import (
	"context"
	"slices"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/internal/member"
)

// HandleMember starts, restarts or stops the worker of a registered cluster.
func (d *Daemon) HandleMember(ctx context.Context, e events.Event) error {
	var r events.ClusterRegistration
	if err := events.Decode(e, &r); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if events.Type(e.Type()) == events.TypeClusterDeregistered {
		if old, counts := d.members.Deregistered(d.workers, r.Name, r.Generation); counts && old != nil {
			if err := old.releaseOnLeaving(ctx, e); err != nil {
				return err // redelivered: the worker is stopped, its records kept
			}
			d.retire(old)
		}
		return nil
	}
	if !d.members.Registered(d.workers, r.Name, r.Generation) {
		return nil // older than the cluster's deregistration, or than its worker's registration
	}
	if r.Spec.PullMode() {
		// Served by its own executord (pull mode), as Karmada's agent
		// serves a Pull cluster: two appliers would race.
		if old, ok := d.members.Stop(d.workers, r.Name); ok {
			d.retire(old)
		}
		d.deps.Log.Info("cluster is in pull mode, served by its own executord", zap.String("cluster", r.Name))
		return nil
	}
	if r.Credentials == nil {
		d.deps.Log.Warn("cluster has no credentials yet", zap.String("cluster", r.Name))
		return nil
	}
	rc, err := member.RESTConfig(r, d.key, d.cfg.KubeAPIQPS, d.cfg.KubeAPIBurst)
	if err != nil {
		d.deps.Log.Warn("cannot serve cluster", zap.String("cluster", r.Name), zap.Error(err))
		return nil
	}
	w, err := newWorker(d, r.Name, r, rc)
	if err != nil {
		return err
	}
	if old, ok := d.members.Stop(d.workers, r.Name); ok {
		d.retire(old)
	}
	d.start(ctx, w, r.Generation)
	if d.in != nil {
		d.in.Nudge() // a new cluster's lease is taken now, not a third of a lease later
	}
	return nil
}

// HandlePlacement carries out one placement (decided or removed) in this
// cluster, or in pull mode one assignment (assigned or unassigned: the
// placement narrowed to this cluster, events.AssignmentOf). What the member
// cannot take now is held and retried (held.go); the placement is
// acknowledged.
func (w *worker) HandlePlacement(ctx context.Context, e events.Event) error {
	var p events.PlacementDecision
	if err := events.Decode(e, &p); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.placed[p.Key]; ok && stale(old, p) {
		return nil
	}
	if removedSince(w.work[p.Key], p) {
		return nil
	}
	if t := events.Type(e.Type()); t == events.TypePlacementRemoved || t == events.TypeWorkUnassigned {
		delete(w.placed, p.Key)
	} else {
		w.placed[p.Key] = p
	}
	f, err := w.converge(ctx, e, p.Key, p.Generation, p.BindingRevision)
	return w.settle(ctx, e, p.Key, f, p.Generation, p.BindingRevision, err)
}

// stale: p is older than the placement held, by binding revision or, for
// one revision (an eviction purged), by decision time.
func stale(old, p events.PlacementDecision) bool {
	return old.BindingRevision > p.BindingRevision ||
		(old.BindingRevision == p.BindingRevision && p.DecidedAt.Before(old.DecidedAt))
}

// removedSince: this cluster's copy of p's template was removed at a later
// binding revision than p's (its last work status says Deleted), so p is a
// late redelivery, such as a placement a killed executord had taken and
// JetStream delivers again after its AckWait: applying it would bring back
// a deleted template (w.placed no longer holds the removal to compare
// with, and after a restart never did; the work status is rebuilt).
func removedSince(last events.WorkStatus, p events.PlacementDecision) bool {
	return last.Phase == events.WorkDeleted && last.BindingRevision > p.BindingRevision
}

// converge makes the cluster hold what the latest placement of key asks for
// (w.placed; none means the template was removed, by the placement of
// generation gen and revision rev) and says which fate that was.
func (w *worker) converge(ctx context.Context, cause events.Event, key events.ObjectKey, gen, rev int64) (fate, error) {
	p, ok := w.placed[key]
	if !ok {
		return fateRemove, w.removeWithDeps(ctx, cause, key, gen, rev)
	}
	f, replicas, why := disposition(p, w.name)
	switch f {
	case fateApply:
		return f, w.apply(ctx, cause, p, replicas, "")
	case fateKeep:
		return f, w.keep(ctx, cause, p, replicas, why)
	}
	// Moved away without an eviction, as a departing cluster's templates
	// are (an eviction's purge, a deleted template are not the race below).
	moved := p.Binding != nil && !slices.ContainsFunc(p.Evictions, func(e events.Eviction) bool { return e.Cluster == w.name })
	if last, had := w.work[key]; moved && had && last.Phase != events.WorkDeleted {
		gone, err := w.departed(ctx)
		if err != nil {
			return fateRemove, err
		}
		if gone {
			return fateRemove, w.markReleased(ctx, cause, last)
		}
	}
	return fateRemove, w.removeWithDeps(ctx, cause, key, p.Generation, p.BindingRevision)
}

// departed reports whether the cluster has left Flotilla (asked only for a
// template moved away without an eviction): the latest event
// on its member subject is a deregistration after the registration this
// worker serves. schedulerd moves a departing cluster's templates away on
// that same deregistration, so the placements that leave it can reach this
// worker before executord has stopped it; deleting their copies then undid
// an unjoin --cascade=orphan, which asks to leave them.
//
// A pull-mode executord (Config.Cluster) reads no member subject: its
// assignments say what leaves.
func (w *worker) departed(ctx context.Context) (bool, error) {
	if w.d.cfg.Cluster != "" {
		return false, nil
	}
	ms, err := w.d.deps.Bus.LatestPerSubject(ctx, events.StreamPolicy, events.MemberSubject(w.name))
	if err != nil {
		return false, err
	}
	if len(ms) == 0 || ms[len(ms)-1].Err != nil {
		return false, nil
	}
	e := ms[len(ms)-1].Event
	if events.Type(e.Type()) != events.TypeClusterDeregistered {
		return false, nil
	}
	var r events.ClusterRegistration
	if err := events.Decode(e, &r); err != nil {
		return false, nil
	}
	return r.Generation > w.reg.Generation, nil
}

// keep leaves an evicted cluster's copy as it is (neither applied again
// nor repaired nor deleted) and says why in its work status, phase
// unchanged, so that `flotilla get work` shows it.
func (w *worker) keep(ctx context.Context, cause events.Event, p events.PlacementDecision, replicas int32, why string) error {
	delete(w.desired, p.Key)
	if _, ok := w.depsOf[p.Key]; !ok && p.Binding != nil {
		// After a restart nothing applied it: its dependencies are those of
		// its binding, and stay needed while the copy is kept.
		for _, d := range p.Binding.Dependencies {
			w.depsOf[p.Key] = append(w.depsOf[p.Key], d.Key)
		}
	}
	last, ok := w.work[p.Key]
	if !ok || last.Phase == events.WorkDeleted {
		return nil // no copy here to keep
	}
	st := last
	st.BindingRevision, st.Message = p.BindingRevision, why
	if st.Phase == events.WorkDeleting {
		st.Phase = events.WorkApplied // a held removal was dropped; the next read-back tells more
	}
	if last.Message != why {
		w.log.Info("evicted copy kept", zap.String("workload", p.Key.String()), zap.Int32("replicas", replicas), zap.String("why", why))
	}
	return w.publish(ctx, cause, st)
}

// unit is one object to apply in this cluster: a placed template or one of

// releaseOnLeaving marks the copies the cluster held when it left, whose placement
// still wanted them there (an unjoin with --cascade=orphan, or a Cluster
// deleted while they ran), as no longer Flotilla's: Deleted, reason
// Released, each with what it is. They stay in the member, as asked; a
// worker for the cluster joined again removed them, taking them for
// copies whose placement had moved away, and deleted what the user had
// chosen to keep. Copies whose removal was under way when the cluster
// left are not released: the next worker finishes that removal (retire).
func (w *worker) releaseOnLeaving(ctx context.Context, cause events.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, st := range events.SortedByKey(w.work) {
		if st.Phase == events.WorkDeleted {
			continue
		}
		// A CRD whose removal waits stays with its custom resources.
		if _, awaits := w.awaiting[st.Key]; !awaits {
			p, placed := w.placed[st.Key]
			if f, _, _ := disposition(p, w.name); !placed || f == fateRemove {
				continue
			}
		}
		if err := w.markReleased(ctx, cause, st); err != nil {
			return err
		}
	}
	return nil
}

// markReleased records the copy st describes as left in the member when
// the cluster left Flotilla: Deleted, reason Released.
func (w *worker) markReleased(ctx context.Context, cause events.Event, st events.WorkStatus) error {
	st.Phase, st.Reason, st.Health = events.WorkDeleted, events.WorkReasonReleased, ""
	st.Message = "left in " + w.name + " when it left Flotilla (unjoined with --cascade=orphan, or its Cluster deleted): no longer managed; joined again, it is not removed"
	return w.publishType(ctx, cause, events.TypeWorkDeleted, st)
}
