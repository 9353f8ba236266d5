package policyd

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy/interpreter"
	"github.com/flotilla-io/flotilla/policyd/binding"
)

// dependenciesOf returns the accepted templates a workload depends on, for
// a policy with propagateDeps.
func (h *Handler) dependenciesOf(t *binding.Template) []events.Dependency {
	var out []events.Dependency
	for _, k := range t.Dependencies() {
		if d, ok := h.st.templates[k]; ok {
			out = append(out, events.Dependency{Key: k, APIVersion: d.Record.APIVersion, Generation: d.Record.Generation, Template: d.Record.Object})
		}
	}
	return out
}

// scriptedDependencies returns the accepted templates that dependency
// scripts name (by name, or every template of the kind in the namespace
// whose labels match the selector), each once, in the scripts' order.
func (h *Handler) scriptedDependencies(deps []interpreter.Dependency) []events.Dependency {
	var out []events.Dependency
	seen := map[events.ObjectKey]bool{}
	add := func(k events.ObjectKey) {
		if d, ok := h.st.templates[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, events.Dependency{Key: k, APIVersion: d.Record.APIVersion, Generation: d.Record.Generation, Template: d.Record.Object})
		}
	}
	for _, dep := range deps {
		if dep.Name != "" {
			add(events.KeyOf(dep.APIVersion, dep.Kind, dep.Namespace, dep.Name))
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(dep.LabelSelector)
		if err != nil {
			continue // the interpreter verified it
		}
		for _, k := range h.st.sortedTemplateKeys() {
			f := h.st.templates[k].Facts()
			if f.APIVersion == dep.APIVersion && f.Kind == dep.Kind && f.Namespace == dep.Namespace && sel.Matches(labels.Set(f.Labels)) {
				add(k)
			}
		}
	}
	return out
}
