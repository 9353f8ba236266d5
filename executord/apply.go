package executord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/executord/render"
	"github.com/flotilla-io/flotilla/internal/member"
)

// AnnotationAppliedHash records which rendered manifest an object holds, so
// a redelivered placement or a restarted executord never applies the same
// generation twice.
const AnnotationAppliedHash = "flotilla.io/applied-hash"

// FieldManager is the server-side apply field manager.
const FieldManager = "flotilla"

// worker serves one member cluster.
type worker struct {
	member.Task
	d      *Daemon
	name   string
	reg    events.ClusterRegistration // push mode: labels/spec for override targeting
	log    *zap.Logger
	dyn    dynamic.Interface
	kube   kubernetes.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	mu     sync.Mutex
	work   map[events.ObjectKey]events.WorkStatus        // last status published per template
	placed map[events.ObjectKey]events.PlacementDecision // last placement seen per template
	// namespaces known to exist in the member (saves a read per apply).
	namespaces map[string]bool
	// depsOf lists the dependencies applied with each template (propagateDeps).
	depsOf map[events.ObjectKey][]events.ObjectKey
	// desired is the manifest last applied per template, for drift checks.
	desired map[events.ObjectKey]map[string]any
	// held are the applies and removals the member could not take yet,
	// retried by the resync loop (see held.go).
	held map[events.ObjectKey]*held
	// consumer is set once the cluster's durable consumer is bound.
	consumer atomic.Pointer[natsbus.Consumer]
}

func newWorker(d *Daemon, name string, reg events.ClusterRegistration, rc *rest.Config) (*worker, error) {
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &worker{d: d, name: name, reg: reg, log: d.deps.Log.With(zap.String("cluster", name)), dyn: dyn, kube: kube,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery())),
		work:   map[events.ObjectKey]events.WorkStatus{}, placed: map[events.ObjectKey]events.PlacementDecision{},
		desired: map[events.ObjectKey]map[string]any{}, depsOf: map[events.ObjectKey][]events.ObjectKey{}, namespaces: map[string]bool{},
		held: map[events.ObjectKey]*held{}}, nil
}

// ConsumerFor names the durable consumer that serves a cluster.
func ConsumerFor(cluster string) string { return "executord-" + events.ClusterToken(cluster) }

// Run serves the cluster until ctx is done; an error that ends it sooner
// is logged.
func (w *worker) Run(ctx context.Context) {
	if err := w.run(ctx); err != nil && ctx.Err() == nil {
		w.log.Error("cluster worker stopped", zap.Error(err))
	}
}

func (w *worker) run(ctx context.Context) error {
	bus := w.d.deps.Bus
	// Catch up first with the latest placement of every template: after a
	// restart this finishes what a crash interrupted (applies are skipped
	// when the member already holds the rendered manifest), and holds again
	// what the member cannot take yet.
	if err := bus.HandleLatest(ctx, events.StreamPlacement, w.handle, events.AllPlacements); err != nil {
		return err
	}
	c, err := bus.Bind(ctx, natsbusSpec(w.name))
	if err != nil {
		return err
	}
	w.consumer.Store(c)
	rctx, cancel := context.WithCancel(ctx)
	resynced := make(chan struct{})
	go func() {
		defer close(resynced)
		w.resyncLoop(rctx)
	}()
	err = c.Run(ctx, w.handle)
	cancel()
	<-resynced
	return err
}

// handle carries out one placement in this cluster. What the member cannot
// take now is held and retried (held.go); the placement is acknowledged.
func (w *worker) handle(ctx context.Context, e events.Event) error {
	var p events.PlacementDecision
	if err := events.Decode(e, &p); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.placed[p.Key]; ok && stale(old, p) {
		return nil
	}
	if events.Type(e.Type()) == events.TypePlacementRemoved {
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
	return f, w.removeWithDeps(ctx, cause, key, p.Generation, p.BindingRevision)
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
// its dependencies (propagateDeps).
type unit struct {
	key        events.ObjectKey
	template   json.RawMessage
	replicas   *int32
	generation int64
	revision   int64
	binding    *events.Binding
	// placement is set for the placed template itself (nil for a
	// dependency): its evictions' preserved labels are injected, and its
	// policy's statePreservation rules are read from the member object.
	placement *events.PlacementDecision
}

// apply renders and applies one placed template and its dependencies.
// repair names the field a drift check found changed by hand ("" for a
// normal apply); a repair applies even when the member's applied-hash says
// the manifest is current.
func (w *worker) apply(ctx context.Context, cause events.Event, p events.PlacementDecision, replicas int32, repair string) error {
	b := p.Binding
	u := unit{key: p.Key, template: b.Template, generation: p.Generation, revision: p.BindingRevision, binding: b, placement: &p}
	if b.Replicas > 0 {
		u.replicas = &replicas
	}
	if err := w.applyUnit(ctx, cause, u, repair); err != nil {
		return err
	}
	deps := make([]events.ObjectKey, 0, len(b.Dependencies))
	for _, d := range b.Dependencies {
		deps = append(deps, d.Key)
		du := unit{key: d.Key, template: d.Template, generation: d.Generation, revision: p.BindingRevision, binding: b}
		if err := w.applyUnit(ctx, cause, du, ""); err != nil {
			return err
		}
	}
	old := w.depsOf[p.Key]
	w.depsOf[p.Key] = deps
	return w.releaseDeps(ctx, cause, p.Key, old)
}

// releaseDeps removes dependencies the owner no longer needs, unless another
// template placed here needs them or they are placed here in their own right.
func (w *worker) releaseDeps(ctx context.Context, cause events.Event, owner events.ObjectKey, deps []events.ObjectKey) error {
	for _, d := range deps {
		if slices.Contains(w.depsOf[owner], d) || w.needed(d, owner) {
			continue
		}
		if err := w.remove(ctx, cause, d, 0, 0); err != nil {
			if !isMemberError(err) {
				return err
			}
			if err := w.hold(ctx, cause, d, true, 0, 0, err); err != nil {
				return err
			}
		}
	}
	return nil
}

// needed: dep is placed (or kept) here in its own right, or another
// template here still has it as a dependency.
func (w *worker) needed(dep, except events.ObjectKey) bool {
	if p, ok := w.placed[dep]; ok {
		if f, _, _ := disposition(p, w.name); f != fateRemove {
			return true
		}
	}
	for k, ds := range w.depsOf {
		if k != except && slices.Contains(ds, dep) {
			return true
		}
	}
	return false
}

func (w *worker) applyUnit(ctx context.Context, cause events.Event, u unit, repair string) error {
	b := u.binding
	var tpl map[string]any
	if err := json.Unmarshal(u.template, &tpl); err != nil {
		return events.Permanent(fmt.Errorf("template of %s: %w", u.key, err))
	}
	status := events.WorkStatus{Key: u.key, Cluster: w.name, Generation: u.generation, BindingRevision: u.revision}
	if u.replicas != nil {
		status.Replicas = *u.replicas
	}
	var rules []policy.StatePreservationRule
	if u.placement != nil {
		rules = preservationRules(b)
	}
	if len(rules) > 0 {
		// Until the member object is read again, the values last read
		// stand: a failed render or apply says nothing new about them, and
		// schedulerd takes an evicted cluster's values from its last status.
		status.PreservedState = w.work[u.key].PreservedState
	}
	manifest, applied, err := render.Render(tpl, render.Cluster{Name: w.name, Labels: w.reg.Labels, Spec: w.reg.Spec}, b.Overrides, u.replicas)
	status.AppliedOverrides = applied
	if err != nil {
		status.Phase, status.Message = events.WorkFailed, err.Error()
		return w.publish(ctx, cause, status)
	}
	if u.placement != nil {
		// After the overrides, before the hash: new labels are a new
		// manifest (applied, and checked for drift like any other field).
		manifest = InjectPreservedLabels(manifest, *u.placement, w.name)
	}
	obj := &unstructured.Unstructured{Object: manifest}
	hash := manifestHash(manifest)
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationAppliedHash] = hash
	obj.SetAnnotations(ann)
	status.AppliedHash = hash
	w.desired[u.key] = obj.Object

	gvk := obj.GroupVersionKind()
	mapping, err := w.mapping(gvk)
	if err != nil {
		return w.applyError(ctx, cause, status, err)
	}
	ri := w.resource(mapping, obj.GetNamespace())
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if err := w.ensureNamespace(ctx, obj.GetNamespace()); err != nil {
			return w.applyError(ctx, cause, status, err)
		}
	}
	current, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	switch {
	case err == nil:
		if current.GetLabels()[render.LabelManaged] != "true" && !overwrite(b) {
			status.Phase = events.WorkFailed
			status.Message = fmt.Sprintf("%s already exists in %s and was not created by Flotilla; conflictResolution is Abort (set spec.conflictResolution: Overwrite to take it over)", u.key.Ref(), w.name)
			return w.publish(ctx, cause, status)
		}
		if current.GetAnnotations()[AnnotationAppliedHash] == hash && repair == "" {
			return w.publishObserved(ctx, cause, status, current, rules) // already holds this manifest
		}
	case apierrors.IsNotFound(err):
	default:
		return w.applyError(ctx, cause, status, err)
	}
	// Logged before the call, so a crash never hides an apply that reached the member.
	w.log.Info("applying", zap.String("workload", u.key.String()), zap.Int64("generation", u.generation), zap.Int32("replicas", status.Replicas))
	w.d.metrics.applies.WithLabelValues(w.name).Inc()
	out, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		if apierrors.IsNotFound(err) {
			delete(w.namespaces, obj.GetNamespace()) // deleted by hand: create it again on the retry
		}
		return w.applyError(ctx, cause, status, err)
	}
	if repair != "" {
		// Reported as an event: the status carries what was put back.
		w.d.metrics.drift.WithLabelValues(w.name).Inc()
		w.log.Info("drift repaired", zap.String("workload", u.key.String()), zap.String("field", repair))
		status.Message = "drift repaired: " + repair + " was changed in the member"
	}
	return w.publishObserved(ctx, cause, status, out, rules)
}

func overwrite(b *events.Binding) bool {
	return b.Spec != nil && b.Spec.ConflictResolution == "Overwrite"
}

// applyError classifies a member error: permanent ones (invalid,
// forbidden) become a Failed status; any other (no answer, a timeout, a
// kind not served yet) a Failed status that says the apply is held, and a
// memberError, so that the apply is held and retried (held.go).
func (w *worker) applyError(ctx context.Context, cause events.Event, status events.WorkStatus, err error) error {
	status.Phase, status.Message = events.WorkFailed, err.Error()
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsMethodNotSupported(err) {
		return w.publish(ctx, cause, status)
	}
	status.Message += "; held, retried until " + w.name + " takes it"
	if perr := w.publish(ctx, cause, status); perr != nil {
		return perr
	}
	return &memberError{fmt.Errorf("apply to %s: %w", w.name, err)}
}

// publishObserved publishes status with what the member object says: phase,
// replicas, health and the values of the template's statePreservation
// rules (none without rules). UnhealthySince carries on from the last
// status of the key (see unhealthySince).
func (w *worker) publishObserved(ctx context.Context, cause events.Event, status events.WorkStatus, obj *unstructured.Unstructured, rules []policy.StatePreservationRule) error {
	h := Interpret(obj)
	status.Phase, status.ReadyReplicas, status.ObservedGeneration = h.Phase, h.ReadyReplicas, h.ObservedGeneration
	if h.Message != "" || h.Phase == events.WorkFailed {
		status.Message = h.Message
	}
	if h.Replicas > 0 {
		status.Replicas = h.Replicas
	}
	status.Health, status.AvailableReplicas, status.UnavailableReplicas = h.Verdict, h.AvailableReplicas, h.UnavailableReplicas
	status.UnhealthySince = unhealthySince(w.work[status.Key], h.Verdict, w.d.now())
	var bad []*RuleError
	status.PreservedState, bad = PreservedState(obj, rules)
	for _, e := range bad {
		w.d.logBadRule(status.Key, e)
	}
	return w.publish(ctx, cause, status)
}

// removeWithDeps removes a template and the dependencies only it needed.
// A memberError says the template's removal must be held; a dependency's
// removal that fails is held on its own.
func (w *worker) removeWithDeps(ctx context.Context, cause events.Event, key events.ObjectKey, gen, rev int64) error {
	if w.needed(key, key) {
		// Still a dependency of another template here: keep the object.
		return nil
	}
	if err := w.remove(ctx, cause, key, gen, rev); err != nil {
		return err
	}
	deps := w.depsOf[key]
	delete(w.depsOf, key)
	return w.releaseDeps(ctx, cause, key, deps)
}

// remove deletes the template's object from this cluster if Flotilla put
// it there (its work status here is not Deleted and the member object
// carries the managed label). Any error of the member is a memberError:
// the removal is held, never given up.
func (w *worker) remove(ctx context.Context, cause events.Event, key events.ObjectKey, gen, rev int64) error {
	delete(w.desired, key)
	last, ok := w.work[key]
	if !ok || last.Phase == events.WorkDeleted {
		return nil
	}
	// The member's preferred version of the group and kind: deletion needs no template.
	mapping, err := w.mapping(schema.GroupVersionKind{Group: key.Group, Kind: key.Kind})
	switch {
	case meta.IsNoMatchError(err):
		// The member does not serve the kind: nothing of it is left there.
	case err != nil:
		// Discovery failed (a member that is down, after a restart emptied
		// the cache): nothing is known to be deleted yet.
		return &memberError{fmt.Errorf("delete from %s: %w", w.name, err)}
	default:
		ri := w.resource(mapping, key.Namespace)
		cur, err := ri.Get(ctx, key.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return &memberError{fmt.Errorf("delete from %s: %w", w.name, err)}
		case cur.GetLabels()[render.LabelManaged] == "true":
			policy := metav1.DeletePropagationBackground
			if err := ri.Delete(ctx, key.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil && !apierrors.IsNotFound(err) {
				return &memberError{fmt.Errorf("delete from %s: %w", w.name, err)}
			}
			w.log.Info("deleted", zap.String("workload", key.String()))
		}
	}
	st := events.WorkStatus{Key: key, Cluster: w.name, Generation: gen, BindingRevision: rev, Phase: events.WorkDeleted, CreatedAt: last.CreatedAt}
	return w.publishType(ctx, cause, events.TypeWorkDeleted, st)
}

func (w *worker) publish(ctx context.Context, cause events.Event, st events.WorkStatus) error {
	return w.publishType(ctx, cause, events.TypeWorkStatusChanged, st)
}

// publishType publishes a status when it differs from the last one.
func (w *worker) publishType(ctx context.Context, cause events.Event, t events.Type, st events.WorkStatus) error {
	last, had := w.work[st.Key]
	now := w.d.now().UTC()
	st.CreatedAt = last.CreatedAt
	if !had || st.CreatedAt.IsZero() || last.Phase == events.WorkDeleted {
		st.CreatedAt = now
	}
	st.UpdatedAt = now
	if had && sameStatus(last, st) {
		return nil
	}
	e, err := events.New(t, w.d.source, st.Key.String(), st)
	if err != nil {
		return events.Permanent(err)
	}
	if cause.ID() != "" {
		events.CausedBy(&e, cause)
	}
	if err := w.d.deps.Bus.Publish(ctx, events.WorkSubject(w.name, st.Key), e); err != nil {
		return err
	}
	w.work[st.Key] = st
	return nil
}

func sameStatus(a, b events.WorkStatus) bool {
	a.UpdatedAt, b.UpdatedAt, a.CreatedAt, b.CreatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func (w *worker) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		w.mapper.Reset()
		m, err = w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	switch {
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%s is not served by %s: %w", gvk, w.name, err)
	case err != nil:
		return nil, fmt.Errorf("discovery of %s in %s: %w", gvk.GroupKind(), w.name, err)
	}
	return m, nil
}

func (w *worker) resource(m *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return w.dyn.Resource(m.Resource).Namespace(ns)
	}
	return w.dyn.Resource(m.Resource)
}

func (w *worker) ensureNamespace(ctx context.Context, ns string) error {
	if ns == "" {
		return nil
	}
	if w.namespaces[ns] {
		return nil
	}
	_, err := w.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = w.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err == nil {
		w.namespaces[ns] = true
	}
	return err
}

// resyncLoop retries the held operations, then reads back the status of
// every object this cluster holds and re-applies objects removed or
// changed by hand, every resync interval.
func (w *worker) resyncLoop(ctx context.Context) {
	t := time.NewTicker(w.d.cfg.ResyncInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
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
// held retries.
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
		if !ok || p.Binding == nil || st.Phase == events.WorkDeleted || st.Phase == events.WorkDeleting || w.held[key] != nil {
			continue
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
			_ = w.publishObserved(ctx, events.Event{}, st, cur, preservationRules(p.Binding))
		}
		w.mu.Unlock()
	}
}

func manifestHash(m map[string]any) string {
	b, _ := json.Marshal(m)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:12])
}
