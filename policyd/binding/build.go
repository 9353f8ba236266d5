package binding

import (
	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Build joins a template with the policy that claims it (nil: none) and
// the overrides that apply to it (policy.ApplicableOverrides, in that
// order). The revision, dependencies and reschedule request are left to
// the caller: they depend on what was published before.
func Build(t *Template, claimed *Candidate, overrides []policy.OverridePolicy) events.Binding {
	replicas, req := t.Workload()
	b := events.Binding{
		Key: t.Record.Key, APIVersion: t.Record.APIVersion, UID: t.UID, Generation: t.Record.Generation,
		Template: t.Record.Object, Replicas: replicas, ReplicaRequirements: req, Overrides: overrides,
		Warnings: t.Record.Warnings, AcceptedAt: t.Record.UpdatedAt, CreatedAt: t.Record.CreatedAt,
	}
	if claimed != nil {
		spec := claimed.Policy.Spec
		b.Spec = &spec
		b.Policy = &events.PolicyRef{Kind: claimed.Key.Kind, Namespace: claimed.Key.Namespace, Name: claimed.Key.Name}
	}
	return b
}
