package policyd

import (
	"github.com/flotilla-io/flotilla/events"
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
