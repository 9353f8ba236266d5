package events

import "github.com/flotilla-io/flotilla/events/policy"

// Object roles: what policyd takes an accepted object for
// (ObjectRecord.Role).
const (
	RoleTemplate = "template"
	RolePolicy   = "policy"
	RoleOverride = "override"
	RoleCluster  = "cluster"
	// RoleCredentials marks sealed Secrets: cluster credentials, never
	// templates.
	RoleCredentials = "credentials"
	// RoleQuota marks FederatedResourceQuotas: limits schedulerd enforces,
	// never templates.
	RoleQuota = "quota"
	// RoleInterpreter marks ResourceInterpreterCustomizations: scripts
	// policyd merges into the bindings of their target kind, never
	// templates.
	RoleInterpreter = "interpreter"
)

// RoleOf says what policyd takes an object of apiVersion and kind in
// namespace for: a propagation policy, an override policy, a FederatedResourceQuota, an
// interpreter customization, a Cluster,
// cluster credentials (a Secret in policy.CredentialNamespaces) or else a
// resource template.
func RoleOf(apiVersion, kind, namespace string) string {
	switch {
	case apiVersion == policy.PolicyAPIVersion && (kind == policy.KindPropagationPolicy || kind == policy.KindClusterPropagationPolicy):
		return RolePolicy
	case apiVersion == policy.PolicyAPIVersion && (kind == policy.KindOverridePolicy || kind == policy.KindClusterOverridePolicy):
		return RoleOverride
	case apiVersion == policy.PolicyAPIVersion && kind == policy.KindFederatedResourceQuota:
		return RoleQuota
	case apiVersion == policy.ConfigAPIVersion && kind == policy.KindResourceInterpreterCustomization:
		return RoleInterpreter
	case apiVersion == policy.ClusterAPIVersion && kind == policy.KindCluster:
		return RoleCluster
	case policy.IsCredentialsSecret(apiVersion, kind, namespace):
		return RoleCredentials
	}
	return RoleTemplate
}
