package policy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCredentialSecretsIn(t *testing.T) {
	cluster := func(spec map[string]any) map[string]any {
		return map[string]any{"apiVersion": ClusterAPIVersion, "kind": KindCluster, "metadata": map[string]any{"name": "c"}, "spec": spec}
	}
	secret := func(ns, name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"namespace": ns, "name": name}}
	}
	for _, tc := range []struct {
		name    string
		objects []map[string]any
		want    map[string]bool
	}{
		{"every Secret in karmada-system is credentials", []map[string]any{secret("karmada-system", "any"), secret("default", "app")},
			map[string]bool{"karmada-system/any": true}},
		{"every Secret in karmada-cluster, where karmadactl join puts them, is credentials",
			[]map[string]any{secret("karmada-cluster", "member1"), secret("karmada-es-member1", "app")},
			map[string]bool{"karmada-cluster/member1": true}},
		{"a secretRef without namespace names a Secret in karmada-system",
			[]map[string]any{cluster(map[string]any{"secretRef": map[string]any{"name": "kc"}})},
			map[string]bool{"karmada-system/kc": true}},
		{"an impersonatorSecretRef names credentials as a secretRef does",
			[]map[string]any{cluster(map[string]any{
				"secretRef":             map[string]any{"namespace": "karmada-cluster", "name": "c1"},
				"impersonatorSecretRef": map[string]any{"namespace": "karmada-cluster", "name": "c1-impersonator"}})},
			map[string]bool{"karmada-cluster/c1": true, "karmada-cluster/c1-impersonator": true}},
		{"a Cluster of another API group references nothing",
			[]map[string]any{{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": KindCluster, "spec": map[string]any{"secretRef": map[string]any{"name": "kc"}}}},
			map[string]bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, CredentialSecretsIn(slices.Values(tc.objects))); diff != "" {
				t.Errorf("credential secrets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReservedNamespaceIsKarmadasList(t *testing.T) {
	for ns, want := range map[string]bool{
		"karmada-system": true, "karmada-cluster": true, "karmada-es-member1": true, "kube-system": true, "kube-public": true,
		"default": false, "karmada-apps": false, "team-a": false,
	} {
		if got := ReservedNamespace(ns); got != want {
			t.Errorf("ReservedNamespace(%q) = %v, want %v", ns, got, want)
		}
	}
}
