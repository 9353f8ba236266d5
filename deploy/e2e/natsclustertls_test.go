package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestATLSNATSClusterIsVerifiedByUpAndByPlainCommands: nats.sh with
// NATS_TLS=1 (make nats-cluster TLS=1) serves its three nodes over TLS
// only, routes included, with a CA it generates and registers for the
// cluster's URLs. A client holding the admin credentials but not the CA
// is refused by every node; `flotilla up --nats-url URLS --tls` verifies
// the nodes with the registered CA; plain CLI commands join the members
// and apply a policy and a template, which is placed on the three.
func TestATLSNATSClusterIsVerifiedByUpAndByPlainCommands(t *testing.T) {
	s := newSystem(t)
	nats, urls := s.startNATSCluster(15500, 16, "NATS_TLS=1")
	s.natsURL = urls
	ns := uniqueNS("cltls")
	t.Cleanup(func() { s.halt(); s.removeNamespace(ns) }) // runs before the cluster stops
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ca := filepath.Join(nats.dir, "tls", "ca.pem")
	for _, n := range strings.Split(urls, ",") {
		if _, err := natsbus.Connect(ctx, n, natsbus.Options{Name: "no-ca", Credentials: nats.adminCreds(), ConnectTimeout: 2 * time.Second}); err == nil || !strings.Contains(err.Error(), "give --tls-ca") {
			t.Errorf("a connection to %s without the CA: %v, want refused and told to give --tls-ca", n, err)
		}
	}
	admin, err := natsbus.Connect(ctx, urls, natsbus.Options{Name: t.Name(), Credentials: nats.adminCreds(), TLSCA: ca})
	if err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	t.Cleanup(admin.Close)

	s.startUpWith(1, "--nats-url", urls, "--tls", "--auth-dir", nats.authDir(), "--data-dir", filepath.Join(s.dir, "up"))
	s.joinAll()
	s.mustCLI("apply", "-f", s.write("policy.yaml", deployments(ns, 0, 1)))
	placedOnAllMembers(t, admin, ns, 60*time.Second)
}
