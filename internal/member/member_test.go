package member

import (
	"strings"
	"testing"
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
