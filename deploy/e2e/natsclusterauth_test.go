package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// appliedIn is a Deployment named web in ns as the CloudEvent an external
// system publishes.
func appliedIn(ns string) string {
	return fmt.Sprintf(`{"specversion":"1.0","type":"io.flotilla.object.applied.v1","source":"/ci","id":"ci-%s-web",
 "datacontenttype":"application/json","data":{"apiVersion":"apps/v1","kind":"Deployment",
 "metadata":{"name":"web","namespace":%q},
 "spec":{"replicas":0,"selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.25.3"}]}}}}}`, ns, ns)
}

// placedOnAllMembers waits up to within until some template of ns has a
// placement, read through bus, that schedules it on the three members.
func placedOnAllMembers(t *testing.T, bus *natsbus.Bus, ns string, within time.Duration) {
	t.Helper()
	eventually(t, within, "a template of "+ns+" placed on the three members", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ps, err := bus.LatestPerSubject(ctx, events.StreamPlacement, "flotilla.placement."+ns+".>")
		if err != nil {
			return err
		}
		for _, m := range ps {
			var p events.PlacementDecision
			if m.Err == nil && events.Decode(m.Event, &p) == nil && p.Scheduled && len(p.Clusters) == len(members) {
				return nil
			}
		}
		return fmt.Errorf("%d placements, none on the three members", len(ps))
	})
}

// TestCredentialsIssuedAndRevokedThroughOneNodeHoldOnAllThreeNodes: nats.sh
// (make nats-cluster) starts three nodes trusting one authority, and
// `flotilla up --nats-url URLS --auth-dir` runs the daemons there, each on
// its own role's credentials, and serves creds. Every node refuses a
// connection without credentials; plain CLI commands use the admin
// credentials nats.sh registered for the cluster's URLs; a publisher
// issued through node 1 publishes a template through node 3 and it is
// placed on the three members; revoked through node 2, the publisher's
// open connections on all three nodes are closed and new ones refused,
// within seconds.
func TestCredentialsIssuedAndRevokedThroughOneNodeHoldOnAllThreeNodes(t *testing.T) {
	s := newSystem(t)
	nats, urls := s.startNATSCluster(15000, 16)
	s.natsURL = urls
	nodes := strings.Split(urls, ",")
	ns := uniqueNS("clauth")
	t.Cleanup(func() { s.halt(); s.removeNamespace(ns) }) // runs before the cluster stops
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	for _, n := range nodes {
		_, err := natsbus.Connect(ctx, n, natsbus.Options{Name: "stranger"})
		var r *natsbus.Refusal
		if !errors.As(err, &r) {
			t.Errorf("a connection to %s without credentials: %v, want refused", n, err)
		}
	}

	s.startUpWith(1, "--nats-url", urls, "--auth-dir", nats.authDir(), "--data-dir", filepath.Join(s.dir, "up"))
	admin, err := natsbus.Connect(ctx, urls, natsbus.Options{Name: t.Name(), Credentials: nats.adminCreds()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	if st, err := admin.JetStream().Stream(ctx, "KV_FLOTILLA_CREDENTIALS"); err != nil {
		t.Error(err)
	} else if r := st.CachedInfo().Config.Replicas; r != 3 {
		t.Errorf("the credentials bucket has %d replicas, want 3", r)
	}
	s.joinAll()
	s.mustCLI("apply", "-f", s.write("policy.yaml", deployments(ns, 0, 0)))

	publisher := filepath.Join(s.dir, "ci.creds")
	s.mustCLI("--nats-url", nodes[0], "creds", "issue", "publisher", "ci", "-o", publisher)
	s.mustCLI("--nats-url", nodes[2], "--creds", publisher, "publish", "-f", s.write("web.json", appliedIn(ns)))
	placedOnAllMembers(t, admin, ns, 30*time.Second)

	var open []*natsbus.Bus
	for _, n := range nodes {
		b, err := natsbus.Connect(ctx, n, natsbus.Options{Name: "ci", Credentials: publisher})
		if err != nil {
			t.Fatalf("the publisher on %s before its revocation: %v", n, err)
		}
		t.Cleanup(b.Close)
		open = append(open, b)
	}
	began := time.Now()
	s.mustCLI("--nats-url", nodes[1], "creds", "revoke", "ci")
	revoked := time.Now()
	for i, b := range open {
		select {
		case err := <-b.Refused():
			var r *natsbus.Refusal
			if !errors.As(err, &r) || r.Verb != "connect" {
				t.Errorf("%s: %v, want the credential refused", nodes[i], err)
			}
			t.Logf("%s closed the revoked connection %s after `creds revoke` began", nodes[i], time.Since(began).Round(time.Millisecond))
		case <-time.After(time.Until(revoked.Add(5 * time.Second))):
			t.Errorf("%s kept the revoked connection open 5s after the revocation", nodes[i])
		}
	}
	for _, n := range nodes {
		if b, err := natsbus.Connect(ctx, n, natsbus.Options{Name: "ci", Credentials: publisher}); err == nil {
			b.Close()
			t.Errorf("the revoked publisher connected to %s", n)
		}
	}
}
