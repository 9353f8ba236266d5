package natsbus_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// securedServer starts an embedded server with authentication on and a
// credentials service granting "publisher" (the input subjects) and
// "reader" (the placement stream); it returns the URL and the admin bus.
func securedServer(t *testing.T) (string, *natsbus.Bus) {
	t.Helper()
	url, auth := eventstest.SecuredServer(t)
	admin := writeCreds(t, auth, "admin", "admin", natsbus.Grant{All: true})
	bus := connect(t, url, admin)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := bus.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	svc, err := natsbus.NewCredentialService(ctx, bus, auth, func(r natsbus.IssueRequest) (natsbus.Grant, error) {
		switch r.Role {
		case "publisher":
			return natsbus.Grant{Publish: []string{events.AllInput}}, nil
		case "reader":
			return natsbus.Grant{Read: []string{events.StreamPlacement}}, nil
		case "member":
			return memberGrant, nil
		}
		return natsbus.Grant{}, fmt.Errorf("no role %s", r.Role)
	})
	if err != nil {
		t.Fatal(err)
	}
	go svc.Run(ctx)
	return url, bus
}

func writeCreds(t *testing.T, auth *natsbus.Authority, name, role string, g natsbus.Grant) string {
	t.Helper()
	raw, err := auth.UserCredentials(name, role, g)
	if err != nil {
		t.Fatal(err)
	}
	return saveCreds(t, name, raw)
}

func saveCreds(t *testing.T, name string, raw []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name+".creds")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func connect(t *testing.T, url, creds string) *natsbus.Bus {
	t.Helper()
	bus, err := natsbus.Connect(context.Background(), url, natsbus.Options{Name: t.Name(), Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	return bus
}

func issue(t *testing.T, admin *natsbus.Bus, role, name string) string {
	t.Helper()
	raw, err := admin.IssueCredentials(context.Background(), natsbus.IssueRequest{Role: role, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return saveCreds(t, name, raw)
}

// refusal waits for the bus's first refusal.
func refusal(t *testing.T, bus *natsbus.Bus, within time.Duration) *natsbus.Refusal {
	t.Helper()
	select {
	case err := <-bus.Refused():
		var r *natsbus.Refusal
		if !errors.As(err, &r) {
			t.Fatalf("refusal %v is not a *Refusal", err)
		}
		return r
	case <-time.After(within):
		t.Fatalf("no refusal within %s", within)
	}
	return nil
}

func TestAConnectionWithoutCredentialsIsRefused(t *testing.T) {
	url, _ := securedServer(t)
	_, err := natsbus.Connect(context.Background(), url, natsbus.Options{Name: t.Name()})
	var r *natsbus.Refusal
	if !errors.As(err, &r) || r.Verb != "connect" {
		t.Fatalf("connect without credentials = %v, want a refusal to connect", err)
	}
}

func TestACredentialPublishesWhatItsRoleAllowsAndIsRefusedTheRestNamingRoleAndSubject(t *testing.T) {
	url, admin := securedServer(t)
	pub := connect(t, url, issue(t, admin, "publisher", "ci"))
	ctx := context.Background()
	e, err := events.New(events.TypeObjectApplied, "/test", key.String(), map[string]string{"kind": "ConfigMap"})
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(ctx, events.InputSubject(key), e); err != nil {
		t.Fatalf("publish on the input subjects: %v", err)
	}
	go func() { _ = pub.Publish(ctx, events.PlacementSubject(key), e) }()
	r := refusal(t, pub, 5*time.Second)
	want := `refused: credential "ci" (role publisher) may not publish to ` + events.PlacementSubject(key)
	if diff := cmp.Diff(want, r.Error()); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
}

func TestAReaderReadsItsStreamAndIsRefusedAnother(t *testing.T) {
	url, admin := securedServer(t)
	reader := connect(t, url, issue(t, admin, "reader", "dash"))
	ctx := context.Background()
	if _, err := reader.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements); err != nil {
		t.Fatalf("read the placement stream: %v", err)
	}
	go func() { _, _ = reader.LatestPerSubject(ctx, events.StreamPolicy, events.AllMembers) }()
	r := refusal(t, reader, 5*time.Second)
	if r.Verb != "publish to" || !strings.Contains(r.Error(), "(reading stream FLOTILLA_POLICY)") {
		t.Errorf("refusal = %q, want a refused read of FLOTILLA_POLICY", r.Error())
	}
}

func TestARevokedCredentialLosesItsOpenConnectionWithinSecondsAndCannotConnectAgain(t *testing.T) {
	url, admin := securedServer(t)
	creds := issue(t, admin, "publisher", "leaked")
	open := connect(t, url, creds)
	n, err := admin.RevokeCredentials(context.Background(), "leaked")
	if err != nil || n != 1 {
		t.Fatalf("revoke = %d, %v; want 1 key revoked", n, err)
	}
	start := time.Now()
	if r := refusal(t, open, 5*time.Second); r.Verb != "connect" {
		t.Errorf("open connection's refusal = %q, want its credential refused", r.Error())
	}
	t.Logf("open connection refused %s after the revocation", time.Since(start).Round(time.Millisecond))
	if _, err := natsbus.Connect(context.Background(), url, natsbus.Options{Credentials: creds}); err == nil {
		t.Error("a revoked credential connected again")
	}
}

func TestOnlyTheAdminRoleReachesTheCredentialsService(t *testing.T) {
	url, admin := securedServer(t)
	pub := connect(t, url, issue(t, admin, "publisher", "ci"))
	go func() {
		_, _ = pub.IssueCredentials(context.Background(), natsbus.IssueRequest{Role: "publisher", Name: "more"})
	}()
	if r := refusal(t, pub, 5*time.Second); r.Subject != natsbus.IssueSubject {
		t.Errorf("refusal = %q, want the issue subject refused", r.Error())
	}
}
