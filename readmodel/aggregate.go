package readmodel

import (
	"errors"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy/interpreter"
)

// aggregate runs the statusAggregation script of a placed template's kind
// over the status its members reflected (reference features §7.2.7), as
// Karmada writes it into the template's .status: one item per work, sorted
// by cluster, with the reflected status, whether it applied and the
// health. ok is false when the kind has no statusAggregation script.
func aggregate(p events.PlacementDecision, work []events.WorkStatus) (status map[string]any, ok bool, err error) {
	b := p.Binding
	if b == nil || b.Interpretation == nil || b.Interpretation.StatusAggregation == "" {
		return nil, false, nil
	}
	var desired map[string]any
	if err := events.UnmarshalJSON(b.Template, &desired); err != nil || desired == nil {
		return nil, true, errors.New("the template in the binding does not decode")
	}
	items := make([]interpreter.StatusItem, 0, len(work))
	for _, s := range work {
		if s.Phase == events.WorkDeleted || s.Phase == events.WorkDeleting {
			continue // not a live work
		}
		it := interpreter.StatusItem{ClusterName: s.Cluster, Status: s.Status, Health: s.Health}
		switch s.Phase {
		case events.WorkPending, events.WorkFailed, events.WorkForbidden:
			it.AppliedMessage = s.Message
		default:
			it.Applied = true
		}
		if it.Health == "" {
			it.Health = events.WorkHealthUnknown
		}
		items = append(items, it)
	}
	st, err := interpreter.Default().AggregateStatus(b.Interpretation.StatusAggregation, desired, items)
	if err != nil {
		return nil, true, errors.New("ResourceInterpreterCustomization(" + strings.Join(b.Interpretation.Names, ",") + ") " + err.Error())
	}
	return st, true, nil
}
