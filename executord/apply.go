package executord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/executord/render"
)

// AnnotationAppliedHash records which rendered manifest an object holds, so
// a redelivered placement or a restarted executord never applies the same
// generation twice.
const AnnotationAppliedHash = "flotilla.io/applied-hash"

// AnnotationBindingRevision records the binding revision a placed
// template's object was applied for. An executord acting on an older
// placement (an owner whose cluster lease is lapsing while another
// instance already applies the next revision, a late redelivery) neither
// applies over it nor deletes it: two owners never apply conflicting
// revisions (DESIGN.md §7). Dependencies, shared between templates whose
// revisions are not comparable, carry none.
const AnnotationBindingRevision = "flotilla.io/binding-revision"

// newerOnMember: cur was applied for a later binding revision than rev.
func newerOnMember(cur *unstructured.Unstructured, rev int64) bool {
	r, err := strconv.ParseInt(cur.GetAnnotations()[AnnotationBindingRevision], 10, 64)
	return err == nil && rev > 0 && r > rev
}

// errNewerOnMember: the placed template was not applied, the member holds
// a later revision of it.
var errNewerOnMember = errors.New("the member holds a later binding revision")

// FieldManager is the server-side apply field manager.
const FieldManager = "flotilla"

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

// interpretation is the template's customization scripts; nil for a
// dependency, which its owner's scripts do not interpret.
func (u *unit) interpretation() *policy.Interpretation {
	if u.placement == nil || u.binding == nil {
		return nil
	}
	return u.binding.Interpretation
}

// apply renders and applies one placed template and its dependencies.
// repair names the field a drift check found changed by hand ("" for a
// normal apply); a repair applies even when the member's applied-hash says
// the manifest is current.
func (w *worker) apply(ctx context.Context, cause events.Event, p events.PlacementDecision, replicas int32, repair string) error {
	b := p.Binding
	u := unit{key: p.Key, template: b.Template, generation: p.Generation, revision: p.BindingRevision, binding: b, placement: &p}
	if b.IsWorkload() {
		u.replicas = &replicas
	}
	if err := w.applyUnit(ctx, cause, u, repair); errors.Is(err, errNewerOnMember) {
		return nil // nor its dependencies: the later revision's owner applies those
	} else if err != nil {
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
	if u.placement != nil && u.replicas != nil {
		// Before the overrides, as Karmada revises (reference features
		// §7.2.3); a failing script skips this cluster's work.
		revised, err := render.Revise(b.Interpretation, tpl, *u.replicas)
		if err != nil {
			status.Phase, status.Message = events.WorkFailed, err.Error()
			return w.publish(ctx, cause, status)
		}
		tpl = revised
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
	if u.placement != nil {
		ann[AnnotationBindingRevision] = strconv.FormatInt(u.revision, 10) // not hashed: a new revision of the same manifest applies nothing
	}
	obj.SetAnnotations(ann)
	status.AppliedHash = hash
	w.desired[u.key] = obj.Object
	if refused(w.work[u.key], status) {
		return nil // its Failed status stands; a redelivery, a drift check or a restart sends nothing
	}

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
		if u.placement != nil && newerOnMember(current, u.revision) {
			w.log.Info("not applied: the member holds a later binding revision", zap.String("workload", u.key.String()),
				zap.Int64("binding_revision", u.revision), zap.String("member_revision", current.GetAnnotations()[AnnotationBindingRevision]))
			return errNewerOnMember
		}
		if current.GetAnnotations()[AnnotationAppliedHash] == hash && repair == "" {
			if u.placement != nil {
				// Drift checks compare with what the member holds.
				ann[AnnotationBindingRevision] = current.GetAnnotations()[AnnotationBindingRevision]
				obj.SetAnnotations(ann)
			}
			return w.publishObserved(ctx, cause, status, current, rules, u.interpretation()) // already holds this manifest
		}
		if u.placement != nil {
			retained, err := retain(b, obj.Object, current.Object)
			if err != nil {
				status.Phase, status.Message = events.WorkFailed, err.Error()
				return w.publish(ctx, cause, status)
			}
			// What the member keeps is desired too: drift checks compare
			// the retained object.
			obj.Object = retained
			w.desired[u.key] = retained
		}
	case apierrors.IsNotFound(err):
	default:
		return w.applyError(ctx, cause, status, err)
	}
	// Its lease may have gone since the worker started on this placement
	// (the round that lost it cancels the worker a moment later): the new
	// owner applies it, from the redelivery.
	if !w.d.gate.Owns(w.name) {
		return fmt.Errorf("%s is no longer served by this instance: left to its new owner", w.name)
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
	return w.publishObserved(ctx, cause, status, out, rules, u.interpretation())
}

func overwrite(b *events.Binding) bool {
	return b.Spec != nil && b.Spec.ConflictResolution == "Overwrite"
}

// applyError reports a member error by its class (classify): a final one
// ends the apply as Failed with the member's message and reason
// events.WorkReasonRefused (applyUnit does not send that manifest again);
// a forbidden one is a Forbidden status that says what the credentials
// lack, and a transient one a Failed status that says the apply is held.
// Both return a memberError, so that the apply is held and retried
// (held.go).
func (w *worker) applyError(ctx context.Context, cause events.Event, status events.WorkStatus, err error) error {
	me := newMemberError(fmt.Errorf("apply to %s: %w", w.name, err))
	switch me.class {
	case final:
		status.Phase, status.Message, status.Reason = events.WorkFailed, err.Error(), events.WorkReasonRefused
		w.log.Info("the member refused the manifest; not retried for this generation", zap.String("workload", status.Key.String()),
			zap.Int64("generation", status.Generation), zap.Int64("binding_revision", status.BindingRevision), zap.Error(err))
		return w.publish(ctx, cause, status)
	case forbidden:
		status.Phase, status.Message = events.WorkForbidden, forbiddenMessage(err, w.name)
	default:
		status.Phase, status.Message = events.WorkFailed, err.Error()+"; held, retried until "+w.name+" takes it"
	}
	if perr := w.publish(ctx, cause, status); perr != nil {
		return perr
	}
	return me
}

// refused reports whether last says the member refused the manifest that
// status is about to apply (the same hash, generation and binding
// revision): it would be refused again.
func refused(last, status events.WorkStatus) bool {
	return last.Phase == events.WorkFailed && last.Reason == events.WorkReasonRefused && last.AppliedHash == status.AppliedHash &&
		last.Generation == status.Generation && last.BindingRevision == status.BindingRevision
}

// publishObserved publishes status with what the member object says: phase,
// replicas, health, the status reflected for aggregation (Reflect) and the
// values of the template's statePreservation rules (none without rules),
// overlaid with what interp's scripts say (observeInterpreted). UnhealthySince carries on from the last
// status of the key (see unhealthySince).
func (w *worker) publishObserved(ctx context.Context, cause events.Event, status events.WorkStatus, obj *unstructured.Unstructured, rules []policy.StatePreservationRule, interp *policy.Interpretation) error {
	h := Interpret(obj)
	status.Phase, status.ReadyReplicas, status.ObservedGeneration = h.Phase, h.ReadyReplicas, h.ObservedGeneration
	if h.Message != "" || h.Phase == events.WorkFailed {
		status.Message = h.Message
	}
	if h.Replicas > 0 {
		status.Replicas = h.Replicas
	}
	status.Health, status.AvailableReplicas, status.UnavailableReplicas = h.Verdict, h.AvailableReplicas, h.UnavailableReplicas
	status.Status = Reflect(obj)
	observeInterpreted(interp, obj, &status)
	status.UnhealthySince = unhealthySince(w.work[status.Key], status.Health, w.d.now())
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
		// Gone already (a redelivery after publishing failed): a CRD that
		// waited for it may not have been removed yet.
		return w.removeAwaitedDefinitions(ctx, cause, key)
	}
	if waits, err := w.awaitResources(ctx, cause, key, gen, rev); waits || err != nil {
		return err // a CRD leaves after its custom resources (definitions.go)
	}
	// The member's preferred version of the group and kind: deletion needs no template.
	mapping, err := w.mapping(schema.GroupVersionKind{Group: key.Group, Kind: key.Kind})
	switch {
	case meta.IsNoMatchError(err):
		// The member does not serve the kind: nothing of it is left there.
	case err != nil:
		// Discovery failed (a member that is down, after a restart emptied
		// the cache): nothing is known to be deleted yet.
		return newMemberError(fmt.Errorf("delete from %s: %w", w.name, err))
	default:
		ri := w.resource(mapping, key.Namespace)
		cur, err := ri.Get(ctx, key.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return newMemberError(fmt.Errorf("delete from %s: %w", w.name, err))
		case newerOnMember(cur, rev):
			w.log.Info("not deleted: the member holds a later binding revision", zap.String("workload", key.String()), zap.Int64("binding_revision", rev))
			return nil
		case cur.GetLabels()[render.LabelManaged] == "true":
			policy := metav1.DeletePropagationBackground
			if err := ri.Delete(ctx, key.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil && !apierrors.IsNotFound(err) {
				return newMemberError(fmt.Errorf("delete from %s: %w", w.name, err))
			}
			w.log.Info("deleted", zap.String("workload", key.String()))
		}
	}
	st := events.WorkStatus{Key: key, Cluster: w.name, Generation: gen, BindingRevision: rev, Phase: events.WorkDeleted, CreatedAt: last.CreatedAt}
	if err := w.publishType(ctx, cause, events.TypeWorkDeleted, st); err != nil {
		return err
	}
	return w.removeAwaitedDefinitions(ctx, cause, key)
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

func manifestHash(m map[string]any) string {
	b, _ := json.Marshal(m)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:12])
}
