package policyd

import (
	"context"
	"sort"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/binding"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// state is policyd's memory: every accepted object by role, and the last
// binding and registration it published. It is rebuilt from FLOTILLA_POLICY
// at start-up, so it never disagrees with what policyd has published.
type state struct {
	records      map[events.ObjectKey]events.ObjectRecord
	templates    map[events.ObjectKey]*binding.Template
	propagations map[events.ObjectKey]binding.Candidate
	overrides    map[events.ObjectKey]policy.OverridePolicy
	clusters     map[string]policy.Cluster
	secrets      map[string]events.SealedSecret // "<namespace>/<name>"
	bindings     map[events.ObjectKey]events.Binding
	bindingLive  map[events.ObjectKey]bool
	// lapsed: the template's live binding names a policy that claims it no
	// more (deleted, or no longer selecting it): Karmada drops the claim,
	// so the next claim is decided afresh, not kept by that policy.
	lapsed map[events.ObjectKey]bool
	// bindingCause: the id of the event that caused the latest binding (an
	// applied template's redelivery finds its answer there).
	bindingCause  map[events.ObjectKey]string
	registrations map[string]events.ClusterRegistration
	// deregistered: the generation each deleted cluster's deregistration
	// carried; a cluster applied again continues after it, so that no
	// consumer takes its new registration for a stale one.
	deregistered map[string]int64
	// priorityClasses: the value of every scheduling.k8s.io/v1
	// PriorityClass template, by name (schedulePriority reads them).
	priorityClasses map[string]int32
	// inputs: per object, the FLOTILLA_INPUT sequence of the latest apply
	// or deletion of it that was handled (superseded), rebuilt from the
	// records' InputSequence and the removals'.
	inputs map[events.ObjectKey]uint64
	// interpreters: every ResourceInterpreterCustomization, by key.
	interpreters map[events.ObjectKey]policy.ResourceInterpreterCustomization
	// scopes: the scope of each kind the accepted
	// CustomResourceDefinitions define; nil when one changed since it
	// was made (customScopes).
	scopes validation.CustomScopes

	// byKey: the propagation and override policies in key order, made
	// when first asked for after a change (every template asks), with the
	// JSON of each propagation policy's spec, encoded when a binding first
	// carries it. Their policies are read-only: bindings point at them.
	byKey struct {
		fresh        bool
		propagations []binding.Candidate
		overrides    []policy.OverridePolicy
		specTexts    map[*policy.PropagationSpec][]byte
	}
}

func newState() *state {
	return &state{
		records: map[events.ObjectKey]events.ObjectRecord{}, templates: map[events.ObjectKey]*binding.Template{},
		propagations: map[events.ObjectKey]binding.Candidate{}, overrides: map[events.ObjectKey]policy.OverridePolicy{},
		clusters: map[string]policy.Cluster{}, secrets: map[string]events.SealedSecret{},
		bindings: map[events.ObjectKey]events.Binding{}, bindingLive: map[events.ObjectKey]bool{}, lapsed: map[events.ObjectKey]bool{}, bindingCause: map[events.ObjectKey]string{},
		registrations: map[string]events.ClusterRegistration{}, deregistered: map[string]int64{},
		priorityClasses: map[string]int32{}, inputs: map[events.ObjectKey]uint64{},
		interpreters: map[events.ObjectKey]policy.ResourceInterpreterCustomization{},
	}
}

// superseded reports whether the input about key that ctx delivers is a
// late redelivery: delivered again (a killed policyd had taken it, or a
// handler failed on it) after a newer apply or deletion of the same object
// was handled. Handling it would undo the newer one (bring a deleted
// object back, roll its content back, delete what was applied again), so
// it must change nothing: the object ends as the newer input left it, as
// if the two had been handled in stream order. A first delivery can be
// superseded too: a partition's new owner handles its latest inputs when
// it takes it over (TakeOver), before its consumer delivers the older
// ones. Sequences compare only within one stream: Daemon.Run forgets those
// beyond the stream's last (it was made afresh, its sequences began
// again). seq is the input's sequence (0: not handed over by a consumer,
// as in tests that call the handler).
func (s *state) superseded(ctx context.Context, key events.ObjectKey) (seq uint64, stale bool) {
	d, ok := events.DeliveryOf(ctx)
	if !ok {
		return 0, false
	}
	return d.Sequence, d.Sequence < s.inputs[key]
}

// handled records that the input of key at seq (0: unknown) was handled.
func (s *state) handled(key events.ObjectKey, seq uint64) {
	if seq > 0 {
		s.inputs[key] = seq
	}
}

// put stores an accepted record under its role.
func (s *state) put(r events.ObjectRecord) error {
	s.records[r.Key] = r
	s.handled(r.Key, r.InputSequence)
	switch r.Role {
	case events.RoleTemplate:
		return s.putTemplate(r, nil)
	case events.RolePolicy:
		var p policy.PropagationPolicy
		if err := events.UnmarshalJSON(r.Object, &p); err != nil {
			return err
		}
		s.propagations[r.Key] = binding.Candidate{Key: r.Key, Policy: p}
		s.policiesChanged()
	case events.RoleOverride:
		var p policy.OverridePolicy
		if err := events.UnmarshalJSON(r.Object, &p); err != nil {
			return err
		}
		s.overrides[r.Key] = p
		s.policiesChanged()
	case events.RoleCluster:
		var c policy.Cluster
		if err := events.UnmarshalJSON(r.Object, &c); err != nil {
			return err
		}
		s.clusters[c.Name] = c
	case events.RoleCredentials:
		var sec events.SealedSecret
		if err := events.UnmarshalJSON(r.Object, &sec); err != nil {
			return err
		}
		s.secrets[sec.Namespace+"/"+sec.Name] = sec
	case events.RoleInterpreter:
		var ric policy.ResourceInterpreterCustomization
		if err := events.UnmarshalJSON(r.Object, &ric); err != nil {
			return err
		}
		s.interpreters[r.Key] = ric
	}
	return nil
}

// putTemplate stores a template's record; obj is r.Object decoded, or nil
// to decode it here. The template keeps only its compacted facts.
func (s *state) putTemplate(r events.ObjectRecord, obj map[string]any) error {
	if obj == nil {
		if err := events.UnmarshalJSON(r.Object, &obj); err != nil {
			return err
		}
	}
	s.records[r.Key] = r
	s.handled(r.Key, r.InputSequence)
	if v, ok := policy.PriorityClassValue(r.APIVersion, r.Key.Kind, obj); ok {
		s.priorityClasses[r.Key.Name] = v
	}
	if r.Key.Kind == kindCRD {
		s.scopes = nil // made again when next asked for
	}
	t := binding.NewTemplate(r, obj)
	t.Compact()
	s.templates[r.Key] = t
	return nil
}

// remove forgets an object. undo puts back exactly what it forgot: a
// deletion whose effects were not all published undoes it, so that its
// redelivery finds the object and publishes them again.
func (s *state) remove(k events.ObjectKey) (undo func()) {
	r, ok := s.records[k]
	if !ok {
		return func() {}
	}
	delete(s.records, k)
	var restore func()
	switch r.Role {
	case events.RoleTemplate:
		t := s.templates[k]
		delete(s.templates, k)
		if k.Kind == kindCRD {
			s.scopes = nil
		}
		pc, hadPC := s.priorityClasses[k.Name]
		isPC := r.APIVersion == policy.PriorityClassAPIVersion && k.Kind == policy.KindPriorityClass
		if isPC {
			delete(s.priorityClasses, k.Name)
		}
		restore = func() {
			s.templates[k] = t
			if k.Kind == kindCRD {
				s.scopes = nil
			}
			if isPC && hadPC {
				s.priorityClasses[k.Name] = pc
			}
		}
	case events.RolePolicy:
		c := s.propagations[k]
		delete(s.propagations, k)
		s.policiesChanged()
		restore = func() { s.propagations[k] = c; s.policiesChanged() }
	case events.RoleOverride:
		o := s.overrides[k]
		delete(s.overrides, k)
		s.policiesChanged()
		restore = func() { s.overrides[k] = o; s.policiesChanged() }
	case events.RoleCluster:
		c := s.clusters[k.Name]
		delete(s.clusters, k.Name)
		restore = func() { s.clusters[k.Name] = c }
	case events.RoleCredentials:
		sk := k.Namespace + "/" + k.Name
		sec := s.secrets[sk]
		delete(s.secrets, sk)
		restore = func() { s.secrets[sk] = sec }
	case events.RoleInterpreter:
		i := s.interpreters[k]
		delete(s.interpreters, k)
		restore = func() { s.interpreters[k] = i }
	default:
		restore = func() {}
	}
	return func() {
		s.records[k] = r
		restore()
	}
}

// sortedInterpreters returns the interpreter customizations in key order.
func (s *state) sortedInterpreters() []policy.ResourceInterpreterCustomization {
	return events.SortedByKey(s.interpreters)
}

// interpretation merges the customizations of one kind (policy.Merge);
// nil when none has a hook.
func (s *state) interpretation(apiVersion, kind string) *policy.Interpretation {
	if len(s.interpreters) == 0 {
		return nil
	}
	return policy.Merge(s.sortedInterpreters(), apiVersion, kind)
}

// sortedPolicies returns the propagation policies in key order
// (determinism). The slice and its policies are shared: read-only.
func (s *state) sortedPolicies() []binding.Candidate {
	s.sortByKey()
	return s.byKey.propagations
}

// sortedOverrides returns the override policies in key order; read-only,
// as sortedPolicies.
func (s *state) sortedOverrides() []policy.OverridePolicy {
	s.sortByKey()
	return s.byKey.overrides
}

// sortByKey makes byKey again after a policy changed.
func (s *state) sortByKey() {
	if s.byKey.fresh {
		return
	}
	s.byKey.propagations, s.byKey.overrides = events.SortedByKey(s.propagations), events.SortedByKey(s.overrides)
	s.byKey.specTexts, s.byKey.fresh = map[*policy.PropagationSpec][]byte{}, true
}

// policiesChanged forgets byKey.
func (s *state) policiesChanged() { s.byKey.fresh = false }

// keepSpecEncoding gives b the JSON of its spec, encoded once per policy
// version when b's spec is one of sortedPolicies' (binding.Build points
// there).
func (s *state) keepSpecEncoding(b *events.Binding) {
	if b.Spec == nil || !s.byKey.fresh {
		return
	}
	text, ok := s.byKey.specTexts[b.Spec]
	if !ok {
		owned := false
		for i := range s.byKey.propagations {
			owned = owned || &s.byKey.propagations[i].Policy.Spec == b.Spec
		}
		if !owned {
			return
		}
		var err error
		if text, err = events.MarshalJSON(b.Spec); err != nil {
			return
		}
		s.byKey.specTexts[b.Spec] = text
	}
	b.KeepSpecEncoding(text)
}

func (s *state) sortedTemplateKeys() []events.ObjectKey { return sortedKeys(s.templates) }

// sortedKeys returns m's keys in key order.
func sortedKeys[V any](m map[events.ObjectKey]V) []events.ObjectKey {
	out := make([]events.ObjectKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// priorityClass looks up a PriorityClass's value (binding.PriorityClasses).
func (s *state) priorityClass(name string) (int32, bool) {
	v, ok := s.priorityClasses[name]
	return v, ok
}

// kindCRD is the kind of a CustomResourceDefinition.
const kindCRD = "CustomResourceDefinition"

// defaultCustomNamespace gives d, a custom resource naming no namespace,
// the namespace default when an accepted definition of its kind is
// Namespaced (validation.DefaultNamespaces), as validation gives a
// built-in kind's: from the bus too, it was taken for cluster-scoped and
// failed in every member.
func (s *state) defaultCustomNamespace(d *validation.Document) {
	if d.Namespaced || d.Namespace != "" {
		return
	}
	if s.scopes == nil {
		s.scopes = validation.AcceptedScopes(s.records)
	}
	docs := []validation.Document{*d}
	validation.DefaultNamespaces(docs, s.scopes, "")
	*d = docs[0]
}
