package member

import "testing"

// FuzzFromKubeconfig builds a REST config from arbitrary bytes, as healthd
// and executord do with a member's kubeconfig once unsealed: it never
// panics, and a config it builds names a server.
func FuzzFromKubeconfig(f *testing.F) {
	f.Add([]byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: Q0E=}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Config","clusters":[{"name":"c","cluster":{"server":""}}],"current-context":"x"}`))
	f.Add([]byte("current-context: c\ncontexts: [{name: c, context: {cluster: missing}}]\n"))
	f.Add([]byte("a: &x [*x, *x]\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := FromKubeconfig(raw, 5, 10)
		if err == nil && cfg.Host == "" {
			t.Fatalf("a REST config without a server from %q", raw)
		}
	})
}
