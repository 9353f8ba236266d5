// Package binding holds policyd's pure rules for turning a resource
// template into a ResourceBinding: which PropagationPolicy or
// ClusterPropagationPolicy claims the template (Claim, as Karmada's
// detector decides), what of the template a binding carries (Template:
// desired replicas, one replica's requests, dependencies) and the binding
// itself (Build). The override policies a binding carries are
// policy.ApplicableOverrides'.
//
// It has no bus, no logger and no state of its own: policyd's handler and
// `flotilla simulate` call the same functions, so a simulated binding is
// the one policyd would publish.
package binding
