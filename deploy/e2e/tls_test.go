package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestTLSUpRefusesClientsWithoutItsCAAndPlacesSeed000 runs `flotilla up
// --tls` with the three sandbox members: up serves a tls:// URL; a client
// holding the admin credentials but not the CA, or another CA, is refused
// and told to give --tls-ca; plain commands, which find the CA up
// registered beside its credentials, join the members and apply seed 000,
// placed 3/2/1 over TLS by up's own daemons.
func TestTLSUpRefusesClientsWithoutItsCAAndPlacesSeed000(t *testing.T) {
	s := newSystem(t)
	s.cleanMembers("default", []string{"my-app"}, []string{"my-app"})
	// The daemons stop first: a running executord repairs the deletion as
	// drift and the cleanup would wait for nothing.
	t.Cleanup(func() { s.halt(); s.cleanMembers("default", []string{"my-app"}, []string{"my-app"}) })
	dataDir, listen := filepath.Join(s.dir, "up"), freeAddr(t)
	s.natsURL = "nats://" + listen
	s.startUpWith(1, "--data-dir", dataDir, "--listen", listen, "--tls")
	if log, _ := os.ReadFile(filepath.Join(s.dir, "up.log")); !strings.Contains(string(log), "NATS tls://"+listen) {
		t.Errorf("up.log does not say NATS tls://%s:\n%s", listen, log)
	}

	admin := filepath.Join(dataDir, "creds", "admin.creds")
	_, err := natsbus.Connect(context.Background(), s.natsURL, natsbus.Options{Name: "no-ca", Credentials: admin})
	if err == nil || !strings.Contains(err.Error(), "give --tls-ca") {
		t.Errorf("a client with the admin credentials and no CA: %v, want refused and told to give --tls-ca", err)
	}
	other, err := natsbus.LoadOrCreateTLS(filepath.Join(s.dir, "other-ca"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, errs, code := s.cli("--tls-ca", other.CA, "get", "clusters"); code == 0 || !strings.Contains(errs, "give --tls-ca") {
		t.Errorf("get clusters trusting another CA: exit %d, want refused and told to give --tls-ca:\n%s", code, errs)
	}

	s.joinAll()
	s.mustCLI("apply", "-f", filepath.Join(seed000, "propagation-policy.yaml"), "-f", filepath.Join(seed000, "override-policy.yaml"), "-f", filepath.Join(seed000, "my-app.yaml"))
	s.expectReplicas(map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1},
		map[string]string{"cluster1": "registry.beijing.example.com/nginx:1.25.3", "cluster2": "registry.shanghai.example.com/nginx:1.25.3", "cluster3": "nginx:1.25.3"})
}
