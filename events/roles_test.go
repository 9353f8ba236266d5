package events

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeyOfAndRoleOf(t *testing.T) {
	for _, tc := range []struct {
		name                             string
		apiVersion, kind, namespace, obj string
		wantKey                          ObjectKey
		wantRole                         string
	}{
		{"a Deployment is a template of group apps", "apps/v1", "Deployment", "default", "web",
			ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}, RoleTemplate},
		{"a PropagationPolicy is a policy", "policy.karmada.io/v1alpha1", "PropagationPolicy", "default", "p",
			ObjectKey{Group: "policy.karmada.io", Kind: "PropagationPolicy", Namespace: "default", Name: "p"}, RolePolicy},
		{"a ClusterOverridePolicy is an override", "policy.karmada.io/v1alpha1", "ClusterOverridePolicy", "", "o",
			ObjectKey{Group: "policy.karmada.io", Kind: "ClusterOverridePolicy", Name: "o"}, RoleOverride},
		{"a FederatedResourceQuota is a quota", "policy.karmada.io/v1alpha1", "FederatedResourceQuota", "team-a", "q",
			ObjectKey{Group: "policy.karmada.io", Kind: "FederatedResourceQuota", Namespace: "team-a", Name: "q"}, RoleQuota},
		{"a ResourceInterpreterCustomization is an interpreter", "config.karmada.io/v1alpha1", "ResourceInterpreterCustomization", "", "ray",
			ObjectKey{Group: "config.karmada.io", Kind: "ResourceInterpreterCustomization", Name: "ray"}, RoleInterpreter},
		{"a Karmada Cluster is a cluster", "cluster.karmada.io/v1alpha1", "Cluster", "", "m1",
			ObjectKey{Group: "cluster.karmada.io", Kind: "Cluster", Name: "m1"}, RoleCluster},
		{"a Secret in karmada-system is credentials", "v1", "Secret", "karmada-system", "kc",
			ObjectKey{Kind: "Secret", Namespace: "karmada-system", Name: "kc"}, RoleCredentials},
		{"a Secret in karmada-cluster is cluster credentials", "v1", "Secret", "karmada-cluster", "member1",
			ObjectKey{Kind: "Secret", Namespace: "karmada-cluster", Name: "member1"}, RoleCredentials},
		{"a Secret elsewhere is a template of the core group", "v1", "Secret", "default", "s",
			ObjectKey{Kind: "Secret", Namespace: "default", Name: "s"}, RoleTemplate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantKey, KeyOf(tc.apiVersion, tc.kind, tc.namespace, tc.obj)); diff != "" {
				t.Errorf("key (-want +got):\n%s", diff)
			}
			if got := RoleOf(tc.apiVersion, tc.kind, tc.namespace); got != tc.wantRole {
				t.Errorf("role %q, want %q", got, tc.wantRole)
			}
		})
	}
}
