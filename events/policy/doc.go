// Package policy holds the Karmada-compatible API types Flotilla reads:
// policy.karmada.io/v1alpha1 PropagationPolicy, ClusterPropagationPolicy,
// OverridePolicy, ClusterOverridePolicy and cluster.karmada.io/v1alpha1
// Cluster, plus the seed-document extensions (docs/policy.md lists them).
//
// The types are Flotilla's own copies (Karmada's module would drag its whole
// dependency tree into every daemon); field names and JSON tags follow
// Karmada v1.16+ exactly so that users' YAML decodes unchanged.
package policy

// API groups and kinds.
const (
	PolicyAPIVersion  = "policy.karmada.io/v1alpha1"
	ClusterAPIVersion = "cluster.karmada.io/v1alpha1"

	KindPropagationPolicy        = "PropagationPolicy"
	KindClusterPropagationPolicy = "ClusterPropagationPolicy"
	KindOverridePolicy           = "OverridePolicy"
	KindClusterOverridePolicy    = "ClusterOverridePolicy"
	KindCluster                  = "Cluster"
)
