package executord

import (
	"context"
	"slices"
	"sync/atomic"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"sync"
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
	"github.com/flotilla-io/flotilla/executord/render"
)

// AnnotationAppliedHash records which rendered manifest an object holds, so
// a redelivered placement or a restarted executord never applies the same
// generation twice.
const AnnotationAppliedHash = "flotilla.io/applied-hash"

// FieldManager is the server-side apply field manager.
const FieldManager = "flotilla"

// worker serves one member cluster.
type worker struct {
	d      *Daemon
	name   string
	reg    events.ClusterRegistration // push mode: labels/spec for override targeting
	log    *zap.Logger
	dyn    dynamic.Interface
	kube   kubernetes.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	work   map[events.ObjectKey]events.WorkStatus        // last status published per template
	placed map[events.ObjectKey]events.PlacementDecision // last placement seen per template
	// namespaces known to exist in the member (saves a read per apply).
	namespaces map[string]bool
	// depsOf lists the dependencies applied with each template (propagateDeps).
	depsOf map[events.ObjectKey][]events.ObjectKey
	// desired is the manifest last applied per template, for drift checks.
	desired map[events.ObjectKey]map[string]any
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
		desired: map[events.ObjectKey]map[string]any{}, depsOf: map[events.ObjectKey][]events.ObjectKey{}, namespaces: map[string]bool{}}, nil
}

// ConsumerFor names the durable consumer that serves a cluster.
func ConsumerFor(cluster string) string { return "executord-" + events.ClusterToken(cluster) }

func (w *worker) start(parent context.Context, work []events.WorkStatus) {
	ctx, cancel := context.WithCancel(parent)
	w.cancel, w.done = cancel, make(chan struct{})
	for _, s := range work {
		w.work[s.Key] = s
	}
	go func() {
		defer close(w.done)
		if err := w.run(ctx); err != nil && ctx.Err() == nil {
			w.log.Error("cluster worker stopped", zap.Error(err))
		}
	}()
}

func (w *worker) stop() {
	w.cancel()
	<-w.done
}

func (w *worker) run(ctx context.Context) error {
	bus := w.d.deps.Bus
	// Catch up first with the latest placement of every template: after a
	// restart this finishes what a crash interrupted (applies are skipped
	// when the member already holds the rendered manifest).
	if err := bus.HandleLatest(ctx, events.StreamPlacement, w.handle, events.AllPlacements); err != nil {
		return err
	}
	c, err := bus.Bind(ctx, natsbusSpec(w.name))
	if err != nil {
		return err
	}
	w.consumer.Store(c)
	go w.resyncLoop(ctx)
	return c.Run(ctx, w.handle)
}

// handle applies one placement to this cluster.
func (w *worker) handle(ctx context.Context, e events.Event) error {
	var p events.PlacementDecision
	if err := events.Decode(e, &p); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.placed[p.Key]; ok && old.BindingRevision > p.BindingRevision {
		return nil // stale
	}
	if events.Type(e.Type()) == events.TypePlacementRemoved {
		delete(w.placed, p.Key)
		return w.removeWithDeps(ctx, e, p.Key, p.Generation, p.BindingRevision)
	}
	w.placed[p.Key] = p
	var target *events.TargetCluster
	for i := range p.Clusters {
		if p.Clusters[i].Name == w.name {
			target = &p.Clusters[i]
		}
	}
	// The clusters list is authoritative: an unschedulable decision that keeps
	// the current result still lists the clusters the workload runs in.
	if target == nil || p.Binding == nil {
		return w.removeWithDeps(ctx, e, p.Key, p.Generation, p.BindingRevision)
	}
	return w.apply(ctx, e, p, target.Replicas, "")
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
}

// apply renders and applies one placed template and its dependencies.
// repair names the field a drift check found changed by hand ("" for a
// normal apply); a repair applies even when the member's applied-hash says
// the manifest is current.
func (w *worker) apply(ctx context.Context, cause events.Event, p events.PlacementDecision, replicas int32, repair string) error {
	b := p.Binding
	u := unit{key: p.Key, template: b.Template, generation: p.Generation, revision: p.BindingRevision, binding: b}
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
			return err
		}
	}
	return nil
}

func (w *worker) needed(dep, except events.ObjectKey) bool {
	if p, ok := w.placed[dep]; ok && w.targets(p) {
		return true
	}
	for k, ds := range w.depsOf {
		if k != except && slices.Contains(ds, dep) {
			return true
		}
	}
	return false
}

func (w *worker) targets(p events.PlacementDecision) bool {
	for _, c := range p.Clusters {
		if c.Name == w.name {
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
	manifest, applied, err := render.Render(tpl, render.Cluster{Name: w.name, Labels: w.reg.Labels, Spec: w.reg.Spec}, b.Overrides, u.replicas)
	status.AppliedOverrides = applied
	if err != nil {
		status.Phase, status.Message = events.WorkFailed, err.Error()
		return w.publish(ctx, cause, status)
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
		status.Phase, status.Message = events.WorkFailed, err.Error()
		_ = w.publish(ctx, cause, status)
		return events.RetryAfter(err, 10*time.Second)
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
			return w.publishObserved(ctx, cause, status, current) // already holds this manifest
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
	return w.publishObserved(ctx, cause, status, out)
}

func overwrite(b *events.Binding) bool {
	return b.Spec != nil && b.Spec.ConflictResolution == "Overwrite"
}

// applyError classifies a member API error: permanent ones (invalid,
// forbidden) become a Failed status; transient ones are retried.
func (w *worker) applyError(ctx context.Context, cause events.Event, status events.WorkStatus, err error) error {
	status.Phase, status.Message = events.WorkFailed, err.Error()
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsMethodNotSupported(err) {
		return w.publish(ctx, cause, status)
	}
	_ = w.publish(ctx, cause, status)
	return events.RetryAfter(fmt.Errorf("apply to %s: %w", w.name, err), 5*time.Second)
}

func (w *worker) publishObserved(ctx context.Context, cause events.Event, status events.WorkStatus, obj *unstructured.Unstructured) error {
	h := Interpret(obj)
	status.Phase, status.ReadyReplicas, status.ObservedGeneration = h.Phase, h.ReadyReplicas, h.ObservedGeneration
	if h.Message != "" || h.Phase == events.WorkFailed {
		status.Message = h.Message
	}
	if h.Replicas > 0 {
		status.Replicas = h.Replicas
	}
	return w.publish(ctx, cause, status)
}

// removeWithDeps removes a template and the dependencies only it needed.
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

// remove deletes the template's object from this cluster if Flotilla put it there.
func (w *worker) remove(ctx context.Context, cause events.Event, key events.ObjectKey, gen, rev int64) error {
	delete(w.desired, key)
	last, ok := w.work[key]
	if !ok || last.Phase == events.WorkDeleted {
		return nil
	}
	// The member's preferred version of the group and kind: deletion needs no template.
	if mapping, err := w.mapping(schema.GroupVersionKind{Group: key.Group, Kind: key.Kind}); err == nil {
		ri := w.resource(mapping, key.Namespace)
		cur, err := ri.Get(ctx, key.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return events.RetryAfter(fmt.Errorf("delete from %s: %w", w.name, err), 5*time.Second)
		case cur.GetLabels()[render.LabelManaged] == "true":
			policy := metav1.DeletePropagationBackground
			if err := ri.Delete(ctx, key.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil && !apierrors.IsNotFound(err) {
				return events.RetryAfter(fmt.Errorf("delete from %s: %w", w.name, err), 5*time.Second)
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
	now := time.Now().UTC()
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
	if err != nil {
		return nil, fmt.Errorf("%s is not served by %s: %w", gvk, w.name, err)
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

// resyncLoop reads back the status of every object this cluster holds and
// re-applies objects removed by hand.
func (w *worker) resyncLoop(ctx context.Context) {
	t := time.NewTicker(w.d.cfg.ResyncInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.resync(ctx)
	}
}

// resync reads every object back without holding the worker's lock (the
// reads are rate-limited and must not starve placements), then takes the
// lock per object to publish its status or repair drift, skipping objects
// whose placement changed meanwhile.
func (w *worker) resync(ctx context.Context) {
	type item struct {
		key     events.ObjectKey
		rev     int64
		p       events.PlacementDecision
		desired map[string]any
	}
	w.mu.Lock()
	items := make([]item, 0, len(w.work))
	for key, st := range w.work {
		if p, ok := w.placed[key]; ok && p.Binding != nil && st.Phase != events.WorkDeleted {
			items = append(items, item{key, p.BindingRevision, p, w.desired[key]})
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
		case apierrors.IsNotFound(err):
			drift = "the object (deleted)"
		case err == nil && it.desired != nil:
			drift = Drift(it.desired, cur.Object)
		}
		w.mu.Lock()
		st, ok := w.work[it.key]
		if p, placed := w.placed[it.key]; !ok || !placed || p.BindingRevision != it.rev || st.Phase == events.WorkDeleted {
			w.mu.Unlock() // handled meanwhile: the new placement decides
			continue
		}
		switch {
		case drift != "":
			w.log.Info("drift: the member object was changed by hand, applying again", zap.String("workload", it.key.String()), zap.String("field", drift))
			for _, tc := range it.p.Clusters {
				if tc.Name == w.name {
					_ = w.apply(ctx, events.Event{}, it.p, tc.Replicas, drift)
				}
			}
		case err == nil && st.Phase != events.WorkFailed:
			_ = w.publishObserved(ctx, events.Event{}, st, cur)
		}
		w.mu.Unlock()
	}
}

func manifestHash(m map[string]any) string {
	b, _ := json.Marshal(m)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:12])
}
