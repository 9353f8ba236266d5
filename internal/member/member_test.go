package member

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/sealing"
)

func kubeconfigWith(user, cluster string) []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters:
- name: m
  cluster:
    server: https://127.0.0.1:6443
` + cluster + `
users:
- name: u
  user:
` + user + `
contexts:
- name: c
  context: {cluster: m, user: u}
current-context: c
`)
}

func TestAKubeconfigFromTheBusMayNotReachIntoTheDaemonsHost(t *testing.T) {
	for _, tc := range []struct {
		name, user, cluster string
		refused             string // the field the error must name; "" = accepted
	}{
		{name: "an embedded token and CA are accepted", user: "    token: abc", cluster: "    certificate-authority-data: Zm9v"},
		{name: "embedded client certificate data is accepted", user: "    client-certificate-data: Zm9v\n    client-key-data: YmFy"},
		{name: "an exec plugin is refused", user: "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, id]", refused: "users[u].user.exec"},
		{name: "an auth provider is refused", user: "    auth-provider:\n      name: oidc", refused: "users[u].user.auth-provider"},
		{name: "a token file is refused", user: "    tokenFile: /etc/shadow", refused: "users[u].user.tokenFile"},
		{name: "a client key file is refused", user: "    client-certificate: /root/.ssh/id_rsa\n    client-key: /root/.ssh/id_rsa", refused: "client-certificate/client-key"},
		{name: "a CA file is refused", user: "    token: abc", cluster: "    certificate-authority: /etc/passwd", refused: "clusters[m].cluster.certificate-authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := selfContained(kubeconfigWith(tc.user, tc.cluster))
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != "" && err == nil:
				t.Fatalf("accepted, want refused naming %s", tc.refused)
			case tc.refused != "" && !strings.Contains(err.Error(), tc.refused):
				t.Fatalf("error %q does not name %s", err, tc.refused)
			}
		})
	}
}

// A Secret in Karmada's own format (a token and a CA bundle, the server in
// the Cluster's apiEndpoint), as karmadactl join writes it, reaches the
// member as Karmada's client would.
func TestRESTConfigReadsKarmadasTokenAndCABundleSecret(t *testing.T) {
	key, err := sealing.Generate()
	if err != nil {
		t.Fatal(err)
	}
	seal := func(v string) []byte {
		b, err := sealing.Seal(key.Public, []byte(v))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	reg := func(data map[string][]byte, spec policy.ClusterSpec) events.ClusterRegistration {
		return events.ClusterRegistration{Name: "member1", Spec: spec,
			Credentials: &events.SealedSecret{Namespace: "karmada-cluster", Name: "member1", Data: data}}
	}
	tokenAndCA := map[string][]byte{TokenKey: seal("sa-token\n"), CABundleKey: seal("-----BEGIN CERTIFICATE-----")}
	cfg, err := RESTConfig(reg(tokenAndCA, policy.ClusterSpec{APIEndpoint: "https://10.0.0.1:6443", ProxyURL: "http://proxy:3128"}), key, 5, 10)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.0.0.1:6443" || cfg.BearerToken != "sa-token" || string(cfg.CAData) != "-----BEGIN CERTIFICATE-----" || cfg.Insecure || cfg.Proxy == nil {
		t.Errorf("config: host %q, token %q, CA %q, insecure %v, proxy set %v", cfg.Host, cfg.BearerToken, cfg.CAData, cfg.Insecure, cfg.Proxy != nil)
	}
	insecure, err := RESTConfig(reg(map[string][]byte{TokenKey: seal("t")}, policy.ClusterSpec{APIEndpoint: "https://m", InsecureSkipTLSVerification: true}), key, 5, 10)
	if err != nil || !insecure.Insecure {
		t.Errorf("insecureSkipTLSVerification without a CA: %v, insecure %v", err, insecure != nil && insecure.Insecure)
	}
	for _, c := range []struct {
		name, want string
		reg        events.ClusterRegistration
	}{
		{"no apiEndpoint", "spec.apiEndpoint", reg(tokenAndCA, policy.ClusterSpec{})},
		{"no CA and TLS verified", CABundleKey, reg(map[string][]byte{TokenKey: seal("t")}, policy.ClusterSpec{APIEndpoint: "https://m"})},
		{"neither format", "neither a kubeconfig key", reg(map[string][]byte{"password": seal("p")}, policy.ClusterSpec{APIEndpoint: "https://m"})},
	} {
		if _, err := RESTConfig(c.reg, key, 5, 10); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", c.name, err, c.want)
		}
	}
}
