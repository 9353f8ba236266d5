package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"
)

func TestMemberRules(t *testing.T) {
	fixed := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "create"}},
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"list"}},
		{NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/version", "/readyz"}, Verbs: []string{"get"}},
	}
	for _, tt := range []struct {
		name      string
		resources []string
		want      []rbacv1.PolicyRule
		wantErr   string
	}{
		{"resources are grouped by API group, sorted, each with the propagation verbs",
			[]string{"statefulsets.apps", "configmaps", "deployments.apps", "ingresses.networking.k8s.io", "deployments.apps"},
			append([]rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: propagateVerbs},
				{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets"}, Verbs: propagateVerbs},
				{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: propagateVerbs},
			}, fixed...), ""},
		{"no resources still reads what healthd needs", nil, fixed, ""},
		{"a wildcard is refused", []string{"*.apps"}, nil, `--resources: "*.apps" is not RESOURCE[.GROUP] (for example deployments.apps, configmaps)`},
		{"a subresource is refused", []string{"deployments/scale.apps"}, nil, `--resources: "deployments/scale.apps" is not RESOURCE[.GROUP] (for example deployments.apps, configmaps)`},
		{"a group without a resource is refused", []string{".apps"}, nil, `--resources: ".apps" is not RESOURCE[.GROUP] (for example deployments.apps, configmaps)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := memberRules(tt.resources)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTokenKubeconfigKeepsTheServerAndCAAndReplacesTheUser(t *testing.T) {
	admin := []byte(`apiVersion: v1
kind: Config
clusters:
- {name: other, cluster: {server: "https://other:6443"}}
- {name: c1, cluster: {server: "https://127.0.0.1:30002", certificate-authority-data: Q0E=}}
users:
- {name: admin, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}}
contexts:
- {name: c1, context: {cluster: c1, user: admin}}
current-context: c1
`)
	out, err := tokenKubeconfig(admin, "the-token")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Server, CA, Token, Context string
		ClientCert                 bool
		Clusters, Users            int
	}
	want := view{Server: "https://127.0.0.1:30002", CA: "CA", Token: "the-token", Context: "flotilla-executor", Clusters: 1, Users: 1}
	u := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	cl := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster]
	got := view{Server: cl.Server, CA: string(cl.CertificateAuthorityData), Token: u.Token, Context: cfg.CurrentContext,
		ClientCert: len(u.ClientCertificateData) > 0, Clusters: len(cfg.Clusters), Users: len(cfg.AuthInfos)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubeconfig (-want +got):\n%s", diff)
	}
}
