package binding

import (
	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// PriorityClasses looks up the value of a scheduling.k8s.io/v1
// PriorityClass by name; ok is false when there is none.
type PriorityClasses func(name string) (value int32, ok bool)

// Build joins a template with the policy that claims it (nil: none) and
// the overrides that apply to it (policy.ApplicableOverrides, in that
// order), and derives what Karmada's detector writes into the binding
// besides: the workload affinity groups (policy.GroupsOf) and the schedule
// priority from classes (policy.SchedulePriorityOf; a missing class is
// recorded in PriorityError). The revision, dependencies and reschedule
// request are left to the caller: they depend on what was published
// before.
func Build(t *Template, claimed *Candidate, overrides []policy.OverridePolicy, classes PriorityClasses) events.Binding {
	replicas, req := t.Workload()
	b := events.Binding{
		Key: t.Record.Key, APIVersion: t.Record.APIVersion, UID: t.UID, Generation: t.Record.Generation,
		Template: t.Record.Object, Replicas: replicas, ReplicaRequirements: req, Overrides: overrides,
		Warnings: t.Record.Warnings, AcceptedAt: t.Record.UpdatedAt, CreatedAt: t.Record.CreatedAt, InputSequence: t.Record.InputSequence,
	}
	if claimed != nil {
		spec := &claimed.Policy.Spec // shared with every binding of the policy: read-only
		b.Spec = spec
		b.Policy = &events.PolicyRef{Kind: claimed.Key.Kind, Namespace: claimed.Key.Namespace, Name: claimed.Key.Name}
		namespaced := t.Record.Key.Namespace != ""
		if wa := spec.Placement.WorkloadAffinity; wa != nil {
			b.WorkloadAffinityGroups = policy.GroupsOf(wa, t.Facts().Labels, namespaced)
		}
		prio, err := policy.SchedulePriorityOf(spec.SchedulePriority, namespaced, classes)
		b.SchedulePriority = prio
		if err != nil {
			b.PriorityError = err.Error()
		}
	}
	return b
}
