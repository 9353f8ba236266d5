package simulate

import (
	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/schedulerd/core"
)

// deferred is a template bound but not yet decided: it shares a quota or
// a workload affinity group with others.
type deferred struct {
	binding events.Binding
	claim   *claim
	in      core.DecideInput
}

// decideInQueueOrder decides the deferred templates one at a time, each
// seeing the placements decided before it (core.Placed), in the order
// Karmada's scheduling queue would pop them (core.QueueOrder: schedule
// priority descending, then input order). Karmada's queue does not order
// bindings created together; input order is the stated tie-break.
func (w *world) decideInQueueOrder(results []Result, pending []*deferred) {
	var queue []core.Queued
	for i, d := range pending {
		if d != nil {
			queue = append(queue, core.Queued{Key: d.binding.Key, Priority: d.binding.SchedulePriority, Arrival: uint64(i)})
		}
	}
	core.QueueOrder(queue)
	for _, q := range queue {
		i := int(q.Arrival)
		d := pending[i]
		d.in.Binding = d.binding
		p := w.placed.Decide(w.sched, d.in)
		w.finish(w.templates[i], &results[i], p, &d.binding, d.claim)
	}
}

// priorityClass looks up a PriorityClass of the input (binding.PriorityClasses).
func (w *world) priorityClass(name string) (int32, bool) {
	v, ok := w.priorityClasses[name]
	return v, ok
}
