package validation

import (
	"errors"
	"fmt"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/policy/interpreter"
	"github.com/flotilla-io/flotilla/internal/strictyaml"
)

const groupConfig = "config.karmada.io"

// checkInterpreter applies Karmada's ResourceInterpreterCustomization CRD
// and webhook rules to one document (reference features §7.4): the target
// and customizations are required, each present member needs luaScript
// ("" is accepted and means no hook), and every script must compile; a
// script that does not is refused at its own line in the file. Whether
// two customizations claim the same operation of one target is checked
// by policyd against those it holds (ConflictingInterpreter).
func checkInterpreter(root *strictyaml.Node, obj map[string]any, rep *report) {
	var ric policy.ResourceInterpreterCustomization
	if !decode(obj, &ric, "", rep) {
		return
	}
	spec := mapAt(obj, "spec")
	if spec == nil {
		rep.required("spec")
		return
	}
	if mapAt(obj, "spec", "target") == nil {
		rep.required("spec.target")
	} else {
		if ric.Spec.Target.APIVersion == "" {
			rep.required("spec.target.apiVersion")
		}
		if ric.Spec.Target.Kind == "" {
			rep.required("spec.target.kind")
		}
	}
	cs := mapAt(obj, "spec", "customizations")
	if cs == nil {
		rep.required("spec.customizations")
		return
	}
	node := root.Get("spec").Get("customizations")
	for _, h := range policy.Hooks {
		member := mapAt(cs, h.Field)
		if _, present := cs[h.Field]; !present {
			continue
		}
		p := "spec.customizations." + h.Field + ".luaScript"
		if _, ok := member["luaScript"].(string); !ok {
			rep.required(p)
			continue
		}
		err := interpreter.Compile(h.Script(&ric.Spec.Customizations))
		var se *interpreter.SyntaxError
		if !errors.As(err, &se) {
			continue
		}
		line := 0
		if n := node.Get(h.Field).Get("luaScript"); n != nil && n.Line() > 0 {
			line = n.Line() + se.Line - 1
			if n.Block() {
				line++
			}
		}
		rep.errorAt(p, line, fmt.Sprintf("InterpreterOperation(%s) Lua script error: script line %d: %s", h.Operation, se.Line, se.Message))
	}
}

// ConflictingInterpreter applies Karmada's rule between customizations
// (reference features §7.4.2): for every operation but
// InterpretDependency, two customizations of the identical target may
// not both have a script. others are the customizations already
// accepted (ric itself, by name, is skipped). The problems name the
// member's field.
func ConflictingInterpreter(ric policy.ResourceInterpreterCustomization, others []policy.ResourceInterpreterCustomization) []Problem {
	var out []Problem
	for _, o := range others {
		if o.Name == ric.Name || o.Spec.Target != ric.Spec.Target {
			continue
		}
		for _, h := range policy.Hooks {
			if h.Operation == policy.OpInterpretDependency {
				continue
			}
			if h.Script(&ric.Spec.Customizations) != "" && h.Script(&o.Spec.Customizations) != "" {
				out = append(out, Problem{Field: "spec.customizations." + h.Field + ".luaScript",
					Reason: fmt.Sprintf("conflicting with InterpreterOperation(%s) of existing ResourceInterpreterCustomization(%s)", h.Operation, o.Name)})
			}
		}
	}
	return out
}
