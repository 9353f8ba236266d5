package binding

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/policy/interpreter"
)

// Interpret applies the ResourceInterpreterCustomizations of the
// template's kind (interp, from policy.Merge; nil: none) to a binding
// Build made, as Karmada's detector does (reference features §7.2, §7.3):
//
//   - a componentResource script gives the components, and then replicas
//     and requirements stay empty (§3.1, gate MultiplePodTemplatesScheduling
//     taken as on);
//   - else a replicaResource script gives the replicas and one replica's
//     requests, in place of the built-in reading;
//   - with deps (the policy's propagateDeps) the dependencyInterpretation
//     scripts give the dependencies: hooked reports whether any did, and
//     the caller then uses deps instead of the pod template scan.
//
// The binding carries interp, so executord and the read model run the
// same scripts. A failing script sets b.InterpreterError (the template is
// then not placed, and says why) and nothing falls back to the built-in
// interpretation.
func Interpret(b *events.Binding, t *Template, interp *policy.Interpretation, propagateDeps bool) (deps []interpreter.Dependency, hooked bool) {
	if interp == nil {
		return nil, false
	}
	b.Interpretation = interp
	wantDeps := propagateDeps && len(interp.Dependencies) > 0
	if interp.ComponentResource == "" && interp.ReplicaResource == "" && !wantDeps {
		return nil, false
	}
	obj := t.Object // nil once compacted: policyd decodes the record's JSON
	if obj == nil {
		if err := events.UnmarshalJSON(t.Record.Object, &obj); err != nil {
			b.InterpreterError = err.Error()
			return nil, wantDeps
		}
	}
	vm := interpreter.Default()
	fail := func(err error) {
		b.InterpreterError = "ResourceInterpreterCustomization(" + strings.Join(interp.Names, ",") + ") " + err.Error()
	}
	switch {
	case interp.ComponentResource != "":
		comps, err := vm.Components(interp.ComponentResource, obj)
		if err == nil {
			err = checkComponents(comps)
		}
		if err != nil {
			fail(err)
			return nil, wantDeps
		}
		b.Components, b.Replicas, b.ReplicaRequirements = comps, 0, nil
	case interp.ReplicaResource != "":
		n, req, err := vm.Replicas(interp.ReplicaResource, obj)
		if err != nil {
			fail(err)
			return nil, wantDeps
		}
		b.Replicas, b.ReplicaRequirements = n, nil
		if req != nil && len(req.ResourceRequest) > 0 {
			b.ReplicaRequirements = req.ResourceRequest
		}
	}
	if !wantDeps {
		return nil, false
	}
	deps, err := vm.Dependencies(interp.Dependencies, obj)
	if err != nil {
		fail(err)
	}
	return deps, true
}

// checkComponents is Karmada's ResourceBinding webhook rule on components
// (reference features §3.1): names non-empty and unique; and, as for any
// Kubernetes replica count, no component's replicas negative.
func checkComponents(comps []policy.Component) error {
	seen := map[string]bool{}
	for _, c := range comps {
		if c.Name == "" {
			return errors.New(policy.OpInterpretComponent + ": component names must be non-empty")
		}
		if seen[c.Name] {
			return errors.New(policy.OpInterpretComponent + ": component names must be unique")
		}
		if c.Replicas < 0 {
			return fmt.Errorf("%s: component %q has %d replicas: must not be negative", policy.OpInterpretComponent, c.Name, c.Replicas)
		}
		seen[c.Name] = true
	}
	return nil
}
