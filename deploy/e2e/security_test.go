package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// myAppApplied is seed 000's my-app Deployment as the CloudEvent an
// external system publishes (flotilla publish).
const myAppApplied = `{"specversion":"1.0","type":"io.flotilla.object.applied.v1","source":"/ci","id":"ci-my-app-1",
 "datacontenttype":"application/json","data":{"apiVersion":"apps/v1","kind":"Deployment",
 "metadata":{"name":"my-app","namespace":"default","labels":{"app":"my-app"}},
 "spec":{"replicas":6,"selector":{"matchLabels":{"app":"my-app"}},
  "template":{"metadata":{"labels":{"app":"my-app"}},"spec":{"containers":[{"name":"web","image":"nginx:1.25.3","ports":[{"containerPort":80}]}]}}}}}`

// notAnInput is a daemon's event type sent where only input belongs.
const notAnInput = `{"specversion":"1.0","type":"io.flotilla.placement.decided.v1","source":"/ci","id":"ci-forged-1",
 "datacontenttype":"application/json","data":{"key":{"kind":"Deployment","namespace":"default","name":"my-app"}}}`

// refusedWithin runs a client command that must be refused: a non-zero
// exit within a few seconds, its error naming the role, the verb and the
// subject.
func (s *system) refusedWithin(d time.Duration, role, verb, subject string, args ...string) {
	s.t.Helper()
	start := time.Now()
	out, errs, code := s.cli(args...)
	took := time.Since(start)
	if code == 0 {
		s.t.Errorf("flotilla %s: exit 0, want a refusal\nstdout: %s", strings.Join(args, " "), out)
		return
	}
	if took > d {
		s.t.Errorf("flotilla %s: refused after %s, want within %s", strings.Join(args, " "), took.Round(time.Millisecond), d)
	}
	for _, want := range []string{"(role " + role + ")", verb, subject} {
		if !strings.Contains(errs, want) {
			s.t.Errorf("flotilla %s: stderr does not name %q:\n%s", strings.Join(args, " "), want, errs)
		}
	}
}

// TestAuthenticatedUpRefusesStrangersAndHoldsEachRoleToItsGrant runs
// `flotilla up` with authentication on (its four daemons each on its own
// role's credentials) and the three sandbox members: a connection without
// credentials is refused; a publisher's template is placed 3/2/1 (seed
// 000), while the publisher cannot read placements, list clusters, or write
// a placement or a binding, and a daemon's event type it sends as input is
// dead-lettered; a viewer reads work and cannot apply; a revoked credential
// loses its open connection and cannot connect again.
func TestAuthenticatedUpRefusesStrangersAndHoldsEachRoleToItsGrant(t *testing.T) {
	s := newSystem(t)
	s.cleanMembers("default", []string{"my-app"}, []string{"my-app"})
	dataDir, listen := filepath.Join(s.dir, "up"), freeAddr(t)
	s.natsURL = "nats://" + listen
	consoleAddr := freeAddr(t)
	s.startUpWith(1, "--data-dir", dataDir, "--listen", listen, "--console-listen", consoleAddr)
	ctx := context.Background()

	_, err := natsbus.Connect(ctx, s.natsURL, natsbus.Options{Name: "stranger"})
	var refusal *natsbus.Refusal
	if !errors.As(err, &refusal) {
		t.Errorf("a connection without credentials: %v, want refused", err)
	}

	// The admin credentials up registered serve plain commands.
	s.joinAll()
	s.mustCLI("apply", "-f", filepath.Join(seed000, "propagation-policy.yaml"), "-f", filepath.Join(seed000, "override-policy.yaml"))
	publisher, viewer := filepath.Join(s.dir, "ci.creds"), filepath.Join(s.dir, "dash.creds")
	s.mustCLI("creds", "issue", "publisher", "ci", "-o", publisher)
	s.mustCLI("creds", "issue", "viewer", "dash", "-o", viewer)

	out := s.mustCLI("--creds", publisher, "publish", "-f", s.write("my-app.json", myAppApplied))
	if !strings.Contains(out, "published io.flotilla.object.applied.v1") {
		t.Errorf("publish: %s", out)
	}
	s.expectReplicas(map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1},
		map[string]string{"cluster1": "registry.beijing.example.com/nginx:1.25.3", "cluster2": "registry.shanghai.example.com/nginx:1.25.3", "cluster3": "nginx:1.25.3"})

	const within = 5 * time.Second
	s.refusedWithin(within, "publisher", "may not publish to", "FLOTILLA_PLACEMENT", "--creds", publisher, "replay", "--since", "1h", "--stream", "FLOTILLA_PLACEMENT")
	s.refusedWithin(within, "publisher", "may not publish to", "FLOTILLA_POLICY", "--creds", publisher, "get", "clusters")
	forged := s.write("forged.json", notAnInput)
	for _, subject := range []string{"flotilla.placement.x", "flotilla.binding.x"} {
		s.refusedWithin(within, "publisher", "may not publish to", subject, "--creds", publisher, "publish", "-f", forged, "--subject", subject)
	}
	s.mustCLI("--creds", publisher, "publish", "-f", forged, "--validate=false") // publish refuses a non-input by default
	eventually(t, 30*time.Second, "the forged input dead-lettered with the reason", func() error {
		if out := s.mustCLI("get", "deadletters"); !strings.Contains(out, "unknown event type") {
			return fmt.Errorf("get deadletters:\n%s", out)
		}
		return nil
	})

	if out := s.mustCLI("--creds", viewer, "get", "work"); strings.Count(out, "my-app") < 3 {
		t.Errorf("viewer's get work:\n%s", out)
	}
	// Every read through the viewer's own consumers (DESIGN.md decision 26).
	if out := s.mustCLI("--creds", viewer, "explain", "deployment/my-app", "-n", "default"); !strings.Contains(out, "cluster1") {
		t.Errorf("viewer's explain:\n%s", out)
	}
	if out := s.mustCLI("--creds", viewer, "replay", "--since", "1h", "--stream", "FLOTILLA_PLACEMENT"); !strings.Contains(out, "my-app") {
		t.Errorf("viewer's replay:\n%s", out)
	}
	// The console up serves reads on the console role's credentials.
	for _, page := range []string{"/workloads", "/events"} {
		eventually(t, 20*time.Second, "the console's "+page+" to show my-app", func() error {
			resp, err := http.Get("http://" + consoleAddr + page)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "my-app") {
				return fmt.Errorf("%s: %s", resp.Status, body)
			}
			return nil
		})
	}
	s.refusedWithin(within, "viewer", "may not publish to", "flotilla.input.", "--creds", viewer, "apply", "-f", filepath.Join(seed000, "my-app.yaml"))

	open, err := natsbus.Connect(ctx, s.natsURL, natsbus.Options{Name: "ci", Credentials: publisher})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	s.mustCLI("creds", "revoke", "ci")
	select {
	case err := <-open.Refused():
		if !strings.Contains(err.Error(), `credential "ci" (role publisher)`) {
			t.Errorf("the open connection's refusal: %v", err)
		}
	case <-time.After(within):
		t.Errorf("the revoked credential's open connection still open %s after the revocation", within)
	}
	s.refusedWithin(within, "publisher", "may not connect", "revoked", "--creds", publisher, "publish", "-f", s.write("again.json", strings.Replace(myAppApplied, "ci-my-app-1", "ci-my-app-2", 1)))

	// Revoking the credential the command connects with is refused
	// without --revoke-my-own (it locked the CLI out, and said it failed);
	// with it, it is done and said so.
	if _, errs, code := s.cli("creds", "revoke", "admin"); code == 0 || !strings.Contains(errs, `this command connects as "admin"`) {
		t.Errorf("creds revoke admin with the admin credentials: exit %d, want refused before anything is revoked:\n%s", code, errs)
	}
	s.mustCLI("get", "clusters") // still admin
	ops := filepath.Join(s.dir, "ops.creds")
	s.mustCLI("creds", "issue", "admin", "ops", "-o", ops)
	if out, errs, code := s.cli("--creds", ops, "creds", "revoke", "ops", "--revoke-my-own"); code != 0 || !strings.Contains(out, `revoked "ops"`) {
		t.Errorf("creds revoke ops --revoke-my-own with ops's credentials: exit %d, want it done and said:\n%s%s", code, out, errs)
	}
	s.refusedWithin(within, "admin", "may not connect", "revoked", "--creds", ops, "get", "clusters")
}
