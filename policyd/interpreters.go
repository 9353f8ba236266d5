package policyd

import (
	"context"
	"slices"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// conflictingInterpreter refuses a ResourceInterpreterCustomization that
// claims an operation another one already scripts for the same target
// (reference features §7.4.2).
func (h *Handler) conflictingInterpreter(obj map[string]any) []events.FieldError {
	var ric policy.ResourceInterpreterCustomization
	raw, _ := events.MarshalJSON(obj)
	if err := events.UnmarshalJSON(raw, &ric); err != nil {
		return []events.FieldError{{Reason: err.Error()}}
	}
	return validation.ConflictingInterpreter(ric, h.st.sortedInterpreters())
}

// rebindInterpreted recomputes the bindings a changed or deleted
// customization rec may alter: the templates of its target kind, and
// those whose binding carries its scripts (its target may have changed).
// Edits apply at once, as in Karmada.
func (h *Handler) rebindInterpreted(ctx context.Context, cause events.Event, rec events.ObjectRecord) error {
	var ric policy.ResourceInterpreterCustomization
	_ = events.UnmarshalJSON(rec.Object, &ric) // a removed record has no object: only the second test applies
	for _, k := range h.st.sortedTemplateKeys() {
		t := h.st.templates[k]
		target := t.Record.APIVersion == ric.Spec.Target.APIVersion && k.Kind == ric.Spec.Target.Kind
		b, ok := h.st.bindings[k]
		carried := ok && b.Interpretation != nil && slices.Contains(b.Interpretation.Names, rec.Key.Name)
		if !target && !carried {
			continue
		}
		if _, err := h.rebind(ctx, cause, k); err != nil {
			return err
		}
	}
	return nil
}
