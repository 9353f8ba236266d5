package policyd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/internal/clock"
	"github.com/flotilla-io/flotilla/policyd/binding"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// Handler holds policyd's state and reacts to input events. It is driven by
// one consumer, so it needs no locking.
type Handler struct {
	pub    events.Publisher
	source string
	log    *zap.Logger
	st     *state
	clock  clock.Clock
	// metrics counts outcomes; never nil.
	metrics *metrics
	// maxReplicas is Config.MaxReplicas (0: no limit).
	maxReplicas int32
	// owns reports whether this instance holds key's partition, and so
	// publishes what key's inputs cause (nil: every key, one instance).
	owns func(events.ObjectKey) bool
	// keeps reports whether this instance keeps key's template in its
	// state: it owns it, or owned it and may again after a lapse (nil:
	// every key).
	keeps func(events.ObjectKey) bool
	// replayThrough: inputs up to this stream sequence are replayed to
	// catch the state up, not handled for the first time (partitions.go);
	// catchingUp: a take-over is handling the inputs its partitions'
	// last owner may not have.
	replayThrough uint64
	catchingUp    bool
	// causes: the input behind the latest effect about each key, published
	// or not, so that what a take-over publishes for another instance's
	// unpublished effect answers the same input (the CLI waits for it).
	causes map[events.ObjectKey]cause
	// answered: during a take-over, the input each object's latest stored
	// rejection answers (unanswered).
	answered map[events.ObjectKey]string
	// withheld: rejections of inputs handled while this instance kept a
	// key's partition without holding its lease (a lapse), by key, to be
	// published when it holds the partition again (partitions.go).
	withheld map[events.ObjectKey]withheldRejection
}

// NewHandler returns a handler with empty state.
func NewHandler(pub events.Publisher, instance string, log *zap.Logger) *Handler {
	return &Handler{pub: pub, source: "/policyd/" + instance, log: log, st: newState(), clock: clock.Real, metrics: newMetrics(nil),
		causes: map[events.ObjectKey]cause{}, withheld: map[events.ObjectKey]withheldRejection{}}
}

func (h *Handler) now() time.Time { return h.clock.Now() }

// Handle handles one input event: every instance takes every input into
// its state, and only the owner of the input's key publishes what it
// causes and dead-letters what it refuses (partitions.go).
func (h *Handler) Handle(ctx context.Context, e events.Event) error {
	if h.replayedAlready(ctx) || h.othersOnly(ctx) {
		return nil
	}
	err := h.dispatch(ctx, e)
	if err != nil && events.IsPermanent(err) && (h.replaying(ctx) || !h.ownsInput(ctx)) {
		h.log.Debug("input refused; its owner dead-letters it", zap.String("id", e.ID()), zap.Error(err))
		return nil
	}
	return err
}

// dispatch dispatches one input event by its type.
func (h *Handler) dispatch(ctx context.Context, e events.Event) error {
	switch events.Type(e.Type()) {
	case events.TypeObjectApplied:
		return h.HandleObjectApplied(ctx, e)
	case events.TypeObjectDeleted:
		return h.HandleObjectDeleted(ctx, e)
	case events.TypeSecretSealed:
		return h.HandleSecretSealed(ctx, e)
	case events.TypeRescheduleRequested:
		return h.HandleRescheduleRequested(ctx, e)
	}
	return events.Permanent(fmt.Errorf("unknown event type %q on the input stream (known: %s, %s, %s)",
		e.Type(), events.TypeObjectApplied, events.TypeObjectDeleted, events.TypeSecretSealed))
}

// onItsSubject refuses (dead-letters) an input whose object is not the one
// its subject names: a publisher's permissions (creds issue publisher
// --namespace NS) are checked by NATS against the subject, so an object
// of another namespace, or a cluster-scoped one, sent on NS's subject
// would otherwise pass them.
func onItsSubject(ctx context.Context, key events.ObjectKey) error {
	d, ok := events.DeliveryOf(ctx)
	if !ok || d.Subject == "" || d.Subject == events.InputSubject(key) {
		return nil
	}
	return events.Permanent(fmt.Errorf("published on %s, but the object is %s, whose subject is %s: an input must travel on its own object's subject",
		d.Subject, key, events.InputSubject(key)))
}

// HandleObjectApplied validates, stores and propagates the effects of one
// applied object.
func (h *Handler) HandleObjectApplied(ctx context.Context, e events.Event) error {
	var obj map[string]any
	if err := events.UnmarshalJSON(e.Data(), &obj); err != nil || obj == nil {
		return events.Permanent(fmt.Errorf("data is not a Kubernetes object in JSON: %v", err))
	}
	doc, errs, warns := validation.ValidateObject(obj)
	h.st.defaultCustomNamespace(&doc)
	key := events.KeyOf(doc.APIVersion, doc.Kind, doc.Namespace, doc.Name)
	role := events.RoleOf(doc.APIVersion, doc.Kind, doc.Namespace)
	if err := onItsSubject(ctx, key); err != nil {
		return err
	}
	seq, stale := h.st.superseded(ctx, key)
	if stale {
		return h.ignore(key, role, seq)
	}
	if len(errs) == 0 && role == events.RoleTemplate {
		errs = replicaLimit(doc.APIVersion, doc.Kind, doc.Object, h.maxReplicas)
	}
	if len(errs) == 0 && role == events.RoleTemplate {
		errs = h.immutableChanges(key, doc)
	}
	if len(errs) == 0 && role == events.RoleInterpreter {
		errs = h.conflictingInterpreter(doc.Object)
	}
	if why := validation.Unappliable(doc.APIVersion, doc.Kind); len(errs) == 0 && why != "" {
		errs = append(errs, events.FieldError{Field: "kind", Reason: why})
	}
	if len(errs) == 0 && role == events.RoleCredentials {
		errs = append(errs, events.FieldError{Field: "metadata.namespace", Reason: "Secrets in " + strings.Join(policy.CredentialNamespaces, " and ") + " are cluster credentials and are accepted only sealed (use flotilla apply or flotilla join)"})
	}
	if len(errs) > 0 {
		return h.reject(ctx, e, key, role, errs)
	}
	raw, _ := events.MarshalJSON(doc.Object)
	rec := events.ObjectRecord{Key: key, APIVersion: doc.APIVersion, Object: raw, Role: role, Generation: 1, UpdatedAt: h.now().UTC(), InputSequence: seq}
	for _, w := range warns {
		rec.Warnings = append(rec.Warnings, validation.Format(w))
	}
	if err := h.accept(ctx, e, rec, doc.Object); err != nil {
		return err
	}
	h.metrics.objects.WithLabelValues(role, "accepted").Inc()
	return nil
}

// immutableChanges refuses an update of an accepted template that changes
// a field the API server keeps as it was created (a Deployment's
// selector, a Job's pod template): every member refused it, Failed, and
// kept running the old generation.
func (h *Handler) immutableChanges(key events.ObjectKey, doc validation.Document) []events.FieldError {
	rec, ok := h.st.records[key]
	if !ok || !validation.HasImmutableFields(doc.APIVersion, doc.Kind) {
		return nil
	}
	var old map[string]any
	if events.UnmarshalJSON(rec.Object, &old) != nil {
		return nil
	}
	return validation.ImmutableChanges(doc.APIVersion, doc.Kind, old, doc.Object)
}

// ignore drops a superseded input (state.superseded) of key at seq.
func (h *Handler) ignore(key events.ObjectKey, role string, seq uint64) error {
	h.log.Info("input redelivered after a newer one of its object was handled: ignored",
		zap.Stringer("key", key), zap.Uint64("sequence", seq), zap.Uint64("handled", h.st.inputs[key]))
	h.metrics.objects.WithLabelValues(role, "superseded").Inc()
	return nil
}

func (h *Handler) reject(ctx context.Context, cause events.Event, key events.ObjectKey, role string, problems []events.FieldError) error {
	out, err := events.NewWithID(events.DeterministicID("rejected", cause.ID()), events.TypeObjectRejected, h.source, key.String(), events.Rejection{Key: key, Problems: problems})
	if err != nil {
		return err
	}
	events.CausedBy(&out, cause)
	switch {
	case h.replaying(ctx) && !h.unanswered(key, cause.ID()): // a replayed input was answered when first handled
	case h.mine(key):
		if err := events.PublishEffect(ctx, h.pub, events.RejectedSubject(key), out); err != nil {
			return err
		}
	default:
		h.withhold(ctx, key, out)
	}
	h.metrics.objects.WithLabelValues(role, "rejected").Inc()
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		msgs = append(msgs, validation.Format(p))
	}
	return events.Permanent(fmt.Errorf("%s rejected: %s", key, strings.Join(msgs, "; ")))
}

// accept stores rec (a new generation if its content changed) and publishes
// the record and its effects. decoded, when not nil, is rec.Object already
// decoded (the validated object it was encoded from), so a template is not
// decoded a second time.
func (h *Handler) accept(ctx context.Context, cause events.Event, rec events.ObjectRecord, decoded map[string]any) error {
	unchanged := false
	if old, ok := h.st.records[rec.Key]; ok {
		rec.Generation, rec.CreatedAt = old.Generation, old.CreatedAt
		if string(old.Object) != string(rec.Object) || old.Role != rec.Role {
			rec.Generation++
		} else {
			rec.UpdatedAt, unchanged = old.UpdatedAt, true
		}
	}
	// A replayed input that changes nothing was answered when first handled.
	quiet := unchanged && h.replaying(ctx)
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = rec.UpdatedAt
	}
	if rec.Role == events.RoleTemplate {
		return h.acceptTemplate(ctx, cause, rec, decoded, quiet)
	}
	if !quiet {
		if err := h.publishAccepted(ctx, cause, rec); err != nil {
			return err
		}
	}
	if err := h.st.put(rec); err != nil {
		return events.Permanent(err)
	}
	return h.effects(ctx, cause, rec)
}

// acceptTemplate stores a template's record and answers with one event:
// the binding it changes, which carries the accepted generation (a policy
// claims the template), or else object.accepted (no policy claims it, or
// the binding stays as it was). One stored event per accepted template
// instead of two is a quarter of the bus's work per placement (DESIGN.md
// decision 15).
// quiet: publish no object.accepted (a replayed input that changed nothing).
func (h *Handler) acceptTemplate(ctx context.Context, cause events.Event, rec events.ObjectRecord, decoded map[string]any, quiet bool) error {
	if err := h.st.putTemplate(rec, decoded); err != nil {
		return events.Permanent(err)
	}
	bound, err := h.rebind(ctx, cause, rec.Key)
	if err != nil {
		return err
	}
	// A redelivered apply whose binding was already published (the ack was
	// lost, or policyd stopped before it) has its answer: that binding.
	answered := h.st.bindingLive[rec.Key] && h.st.bindingCause[rec.Key] == cause.ID()
	if !bound && !answered && !quiet {
		if err := h.publishAccepted(ctx, cause, rec); err != nil {
			return err
		}
	}
	if err := h.rebindPrioritized(ctx, cause, rec); err != nil {
		return err
	}
	return h.rebindDependents(ctx, cause, rec.Key)
}

// rebindPrioritized recomputes the bindings whose policy's schedulePriority
// names the PriorityClass rec, when rec is one: a template waiting for its
// class is bound once the class exists (Karmada's detector retries), and
// a changed value reaches the bindings at once. Deleting a class changes
// no binding, as in Karmada, which does not watch PriorityClasses.
func (h *Handler) rebindPrioritized(ctx context.Context, cause events.Event, rec events.ObjectRecord) error {
	if rec.APIVersion != policy.PriorityClassAPIVersion || rec.Key.Kind != policy.KindPriorityClass {
		return nil
	}
	for _, k := range h.st.sortedTemplateKeys() {
		b, ok := h.st.bindings[k]
		if !ok || !h.st.bindingLive[k] || b.Spec == nil || b.Spec.SchedulePriority == nil || b.Spec.SchedulePriority.PriorityClassName != rec.Key.Name {
			continue
		}
		if _, err := h.rebind(ctx, cause, k); err != nil {
			return err
		}
	}
	return nil
}

func (h *Handler) publishAccepted(ctx context.Context, cause events.Event, rec events.ObjectRecord) error {
	return h.publish(ctx, cause, rec.Key, events.TypeObjectAccepted, events.ObjectSubject(rec.Key), rec.Key.String(),
		events.DeterministicID("accepted", rec.Key.String(), fmt.Sprint(rec.Generation), cause.ID()), rec)
}

// effects republishes what depends on a policy, override, cluster or
// credentials object that changed (a template's are acceptTemplate's).
func (h *Handler) effects(ctx context.Context, cause events.Event, rec events.ObjectRecord) error {
	switch rec.Role {
	case events.RolePolicy, events.RoleOverride:
		for _, k := range h.st.sortedTemplateKeys() {
			if _, err := h.rebind(ctx, cause, k); err != nil {
				return err
			}
		}
	case events.RoleInterpreter:
		return h.rebindInterpreted(ctx, cause, rec)
	case events.RoleCluster:
		return h.register(ctx, cause, rec.Key.Name)
	case events.RoleCredentials:
		for _, name := range h.clustersUsingSecret(rec.Key.Namespace, rec.Key.Name) {
			if err := h.register(ctx, cause, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// HandleSecretSealed stores sealed cluster credentials.
func (h *Handler) HandleSecretSealed(ctx context.Context, e events.Event) error {
	var s events.SealedSecret
	if err := events.Decode(e, &s); err != nil {
		return err
	}
	if s.Name == "" || len(s.Data) == 0 {
		return events.Permanent(errors.New("sealed secret needs a name and data"))
	}
	if s.Namespace == "" {
		s.Namespace = policy.CredentialsNamespace
	}
	raw, _ := events.MarshalJSON(s)
	key := events.ObjectKey{Kind: "Secret", Namespace: s.Namespace, Name: s.Name}
	if err := onItsSubject(ctx, key); err != nil {
		return err
	}
	seq, stale := h.st.superseded(ctx, key)
	if stale {
		return h.ignore(key, events.RoleCredentials, seq)
	}
	rec := events.ObjectRecord{Key: key, APIVersion: "v1", Object: raw, Role: events.RoleCredentials, Generation: 1, UpdatedAt: h.now().UTC(), InputSequence: seq}
	if old, ok := h.st.records[key]; ok && old.Role == events.RoleTemplate {
		// A Secret taken for a template until a Cluster named it (hubd
		// learns it is credentials only when the Cluster arrives): its
		// binding is withdrawn, so its copies leave the members, before it
		// is kept as credentials.
		undo := h.st.remove(key)
		if err := h.removalEffects(ctx, e, key, old); err != nil {
			undo()
			return err
		}
		rec.Generation = old.Generation + 1
		h.log.Info("a template became cluster credentials: its binding is withdrawn", zap.Stringer("key", key))
	}
	if err := h.accept(ctx, e, rec, nil); err != nil {
		return err
	}
	h.metrics.objects.WithLabelValues(events.RoleCredentials, "accepted").Inc()
	return nil
}

// HandleRescheduleRequested republishes a template's binding with
// rescheduleRequestedAt set, so schedulerd places it afresh.
func (h *Handler) HandleRescheduleRequested(ctx context.Context, e events.Event) error {
	_, key, err := decodeRef(ctx, e, "reschedule")
	if err != nil {
		return err
	}
	b, ok := h.st.bindings[key]
	if !ok || !h.st.bindingLive[key] {
		return events.Permanent(fmt.Errorf("reschedule %s: no policy has claimed it", key))
	}
	at := e.Time().UTC()
	if at.IsZero() {
		at = h.now().UTC()
	}
	b.RescheduleRequestedAt = &at
	b.Revision++
	if err := h.publish(ctx, e, key, events.TypeBindingChanged, events.BindingSubject(key), key.String(),
		events.DeterministicID("binding", key.String(), fmt.Sprint(b.Revision)), b); err != nil {
		return err
	}
	h.st.bindings[key], h.st.bindingCause[key] = b, e.ID()
	h.metrics.bindings.WithLabelValues("changed").Inc()
	return nil
}

// rebind recomputes a template's binding and publishes it if it changed;
// published says whether it did.
func (h *Handler) rebind(ctx context.Context, cause events.Event, key events.ObjectKey) (published bool, err error) {
	t, ok := h.st.templates[key]
	if !ok {
		return false, nil
	}
	last, had := h.st.bindings[key]
	var current *events.PolicyRef
	if had && h.st.bindingLive[key] && !h.st.lapsed[key] {
		current = last.Policy
	}
	facts := t.Facts()
	claimed := binding.Claim(facts, current, h.st.sortedPolicies())
	if claimed == nil {
		// Unclaimed: Karmada leaves what was propagated in place when its
		// policy goes away or stops selecting it, and drops the claim (the
		// read model's Published.ClaimLapse); a template never claimed is
		// simply not placed.
		if had && h.st.bindingLive[key] {
			h.st.lapsed[key] = true
		}
		return false, nil
	}
	delete(h.st.lapsed, key)
	b := binding.Build(t, claimed, policy.ApplicableOverrides(facts, h.st.sortedOverrides()), h.st.priorityClass)
	h.st.keepSpecEncoding(&b)
	propagateDeps := claimed.Policy.Spec.PropagateDeps
	deps, scripted := binding.Interpret(&b, t, h.st.interpretation(t.Record.APIVersion, key.Kind), propagateDeps)
	switch {
	case scripted:
		b.Dependencies = h.scriptedDependencies(deps)
	case propagateDeps:
		b.Dependencies = h.dependenciesOf(t)
	}
	if had && h.st.bindingLive[key] && sameBinding(last, b) {
		return false, nil
	}
	b.Revision = last.Revision + 1
	if err := h.publish(ctx, cause, key, events.TypeBindingChanged, events.BindingSubject(key), key.String(),
		events.DeterministicID("binding", key.String(), fmt.Sprint(b.Revision)), b); err != nil {
		return false, err
	}
	h.st.bindings[key], h.st.bindingLive[key], h.st.bindingCause[key] = b, true, cause.ID()
	h.metrics.bindings.WithLabelValues("changed").Inc()
	return true, nil
}

// rebindDependents recomputes the bindings of workloads whose policy
// propagates dependencies and whose pod template references key.
func (h *Handler) rebindDependents(ctx context.Context, cause events.Event, key events.ObjectKey) error {
	switch key.Kind {
	case "ConfigMap", "Secret", "PersistentVolumeClaim", "ServiceAccount":
	default:
		return nil // only these kinds can be a dependency; skip the scan (it made bulk applies quadratic)
	}
	for _, k := range h.st.sortedTemplateKeys() {
		b, ok := h.st.bindings[k]
		if k == key || !ok || !h.st.bindingLive[k] || b.Spec == nil || !b.Spec.PropagateDeps {
			continue
		}
		t := h.st.templates[k]
		for _, dep := range t.Dependencies() {
			if dep == key {
				if _, err := h.rebind(ctx, cause, k); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

// unbind publishes the removal of a deleted template's binding.
func (h *Handler) unbind(ctx context.Context, cause events.Event, key events.ObjectKey) error {
	last, had := h.st.bindings[key]
	if !had || !h.st.bindingLive[key] {
		return nil
	}
	b := events.Binding{Key: key, APIVersion: last.APIVersion, Generation: last.Generation, Revision: last.Revision + 1}
	if err := h.publish(ctx, cause, key, events.TypeBindingRemoved, events.BindingSubject(key), key.String(),
		events.DeterministicID("binding", key.String(), fmt.Sprint(b.Revision)), b); err != nil {
		return err
	}
	h.st.bindings[key], h.st.bindingLive[key], h.st.bindingCause[key] = b, false, cause.ID()
	delete(h.st.lapsed, key)
	h.metrics.bindings.WithLabelValues("removed").Inc()
	return nil
}

// register publishes a cluster's registration when it changed.
func (h *Handler) register(ctx context.Context, cause events.Event, name string) error {
	c, ok := h.st.clusters[name]
	if !ok {
		return nil
	}
	reg := events.ClusterRegistration{Name: name, Labels: c.Labels, Annotations: c.Annotations, Spec: c.Spec}
	if ref := c.Spec.SecretRef; ref != nil {
		if s, ok := h.st.secrets[ref.SecretKey()]; ok {
			reg.Credentials = &s
		}
	}
	last, had := h.st.registrations[name]
	reg.Generation = last.Generation
	if !had {
		reg.Generation = h.st.deregistered[name] // continue after a tombstone
	}
	if had {
		a, _ := events.MarshalJSON(last)
		reg2 := reg
		b, _ := events.MarshalJSON(reg2)
		if string(a) == string(b) {
			return nil
		}
	}
	reg.Generation++
	if err := h.publish(ctx, cause, clusterKey(name), events.TypeClusterRegistered, events.MemberSubject(name), name,
		events.DeterministicID("registered", name, fmt.Sprint(reg.Generation)), reg); err != nil {
		return err
	}
	h.st.registrations[name] = reg
	return nil
}

// clustersUsingSecret names the clusters whose spec references the Secret
// ns/name (policy.ClusterSpec.CredentialSecrets).
func (h *Handler) clustersUsingSecret(ns, name string) []string {
	var out []string
	for _, c := range h.st.clusters {
		if slices.Contains(c.Spec.CredentialSecrets(), ns+"/"+name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// sameBinding reports whether two bindings would schedule and apply alike
// (everything but the revision, a reschedule request and the input the
// template's record was made from).
func sameBinding(a, b events.Binding) bool {
	a.Revision, b.Revision = 0, 0
	a.RescheduleRequestedAt, b.RescheduleRequestedAt = nil, nil
	a.InputSequence, b.InputSequence = 0, 0
	ja, _ := events.MarshalJSON(a)
	jb, _ := events.MarshalJSON(b)
	return string(ja) == string(jb)
}

// publish publishes an effect about owner's partition, when this instance
// holds it; another instance's effects change only this one's state
// (partitions.go says why).
func (h *Handler) publish(ctx context.Context, cause events.Event, owner events.ObjectKey, t events.Type, natsSubject, subject, id string, data any) error {
	if cause.ID() != "" {
		h.causes[owner] = causeOf(cause)
	}
	if !h.mine(owner) {
		return nil
	}
	out, err := events.NewWithID(id, t, h.source, subject, data)
	if err != nil {
		return events.Permanent(err)
	}
	if cause.ID() != "" { // a take-over's rebind has no input causing it
		events.CausedBy(&out, cause)
	}
	return events.PublishEffect(ctx, h.pub, natsSubject, out)
}
