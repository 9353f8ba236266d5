package executord

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/policy/interpreter"
)

// Where executord runs a template's ResourceInterpreterCustomization
// scripts, carried in its binding (reference features §7.2): revision of
// the member's replica count before the overrides, retention over the
// member's copy, status reflection and health when it reads the member
// object. A script error is reported on the work, never replaced by the
// built-in interpretation.

// interpretationOf is b's scripts; nil without a binding.
func interpretationOf(b *events.Binding) *policy.Interpretation {
	if b == nil {
		return nil
	}
	return b.Interpretation
}

// retain runs the retention script over the member's current object;
// manifest unchanged when there is none.
func retain(b *events.Binding, manifest, current map[string]any) (map[string]any, error) {
	if b == nil || b.Interpretation == nil || b.Interpretation.Retention == "" {
		return manifest, nil
	}
	return interpreter.Default().Retain(b.Interpretation.Retention, manifest, current)
}

// observeInterpreted overlays what the scripts say about the member
// object on status: the health of the healthInterpretation script (an
// error makes it Unknown and is the status message), and the status the
// statusReflection script reflects, or the object's whole .status when
// only statusAggregation is scripted (Karmada's native reflection for a
// kind without a handler).
func observeInterpreted(interp *policy.Interpretation, obj *unstructured.Unstructured, status *events.WorkStatus) {
	if interp == nil {
		return
	}
	vm := interpreter.Default()
	if interp.Health != "" {
		healthy, err := vm.Health(interp.Health, obj.Object)
		switch {
		case err != nil:
			status.Health, status.Message = events.WorkHealthUnknown, err.Error()
		case healthy:
			status.Health = events.WorkHealthy
		default:
			status.Health = events.WorkUnhealthy
		}
	}
	switch {
	case interp.StatusReflection != "":
		st, err := vm.ReflectStatus(interp.StatusReflection, obj.Object)
		if err != nil {
			status.Message = err.Error()
			return
		}
		status.Status = st
	case interp.StatusAggregation != "":
		st, _ := obj.Object["status"].(map[string]any)
		status.Status = st
	}
}
