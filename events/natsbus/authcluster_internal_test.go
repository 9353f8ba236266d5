package natsbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startSecuredCluster starts three servers routed into one cluster, each
// trusting auth with its own resolver directory, and returns their URLs.
func startSecuredCluster(t *testing.T, auth *Authority) []string {
	t.Helper()
	ports := make([]int, 3)
	for i := range ports {
		ports[i] = 15000 + i + int(time.Now().UnixNano()%2000)*3
	}
	routes := server.RoutesFromStr(fmt.Sprintf("nats://127.0.0.1:%d,nats://127.0.0.1:%d,nats://127.0.0.1:%d", ports[0], ports[1], ports[2]))
	var urls []string
	for i := range ports {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true,
			JetStream: true, StoreDir: filepath.Join(t.TempDir(), "jetstream"),
			Cluster: server.ClusterOpts{Name: "flotilla", Host: "127.0.0.1", Port: ports[i]},
			Routes:  routes,
		}
		if err := secure(opts, auth); err != nil {
			t.Fatal(err)
		}
		srv, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Start()
		t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
		if !srv.ReadyForConnections(10 * time.Second) {
			t.Fatalf("server %d not ready", i)
		}
		urls = append(urls, srv.ClientURL())
	}
	return urls
}

func credsFile(t *testing.T, raw []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "x.creds")
	if err := os.WriteFile(f, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestARevocationMadeOnOneNodeClosesTheCredentialsConnectionOnAnother:
// the credentials service on node 0 issues a credential, a client uses it
// on node 2, and revoking it on node 0 closes that connection within
// seconds (the account update spreads through the system account).
func TestARevocationMadeOnOneNodeClosesTheCredentialsConnectionOnAnother(t *testing.T) {
	auth, err := LoadOrCreateAuthority(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	urls := startSecuredCluster(t, auth)
	admin, err := auth.UserCredentials("admin", "admin", Grant{All: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var bus *Bus
	deadline := time.Now().Add(45 * time.Second) // a loaded machine forms a cluster slowly
	for {                                        // the cluster forms its routes and elects a JetStream leader first
		bus, err = Connect(ctx, urls[0], Options{Credentials: credsFile(t, admin)})
		if err == nil {
			actx, acancel := context.WithTimeout(ctx, 3*time.Second)
			_, err = NewCredentialService(actx, bus, auth, func(IssueRequest) (Grant, error) { return Grant{Publish: []string{"flotilla.input.>"}}, nil })
			acancel()
		}
		if err == nil || time.Now().After(deadline) {
			break
		}
		if bus != nil {
			bus.Close()
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("credentials service on a 3-node cluster: %v", err)
	}
	defer bus.Close()
	raw, err := bus.IssueCredentials(ctx, IssueRequest{Role: "publisher", Name: "far"})
	if err != nil {
		t.Fatal(err)
	}
	far, err := Connect(ctx, urls[2], Options{Credentials: credsFile(t, raw)})
	if err != nil {
		t.Fatalf("the credential issued on node 0 connects to node 2: %v", err)
	}
	defer far.Close()
	if _, err := bus.RevokeCredentials(ctx, "far"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case err := <-far.Refused():
		var r *Refusal
		if !errors.As(err, &r) || r.Verb != "connect" {
			t.Errorf("refusal on node 2 = %v, want the credential refused", err)
		}
		t.Logf("node 2 closed the revoked connection %s after the revocation", time.Since(start).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatal("node 2 kept the revoked connection open 5s after the revocation")
	}
	for _, u := range urls {
		if _, err := Connect(ctx, u, Options{Credentials: credsFile(t, raw)}); err == nil {
			t.Errorf("the revoked credential connected to %s", u)
		}
	}
}
