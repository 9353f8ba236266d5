package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/policyd"
)

// policyd's state during one exit-status case.
const (
	policydRunning = "running"
	policydNever   = "never started"
	policydStopped = "started once, then stopped"
)

// startPolicyd runs policyd (refusing templates above 5 replicas) until
// the returned function is called, which waits for it to end.
func startPolicyd(t *testing.T, bus *natsbus.Bus) (stop func()) {
	t.Helper()
	d, err := policyd.New(policyd.Config{Instance: "0", MaxReplicas: 5}, policyd.Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = d.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// statusOf is the exit status the flotilla binary gives for err.
func statusOf(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err)
}

// apply and delete exit 0 when policyd confirms every object, 1 when an
// object is refused, and 3 when everything is stored on the bus but not
// confirmed within --timeout, saying so and what policyd's consumer holds.
func TestApplyAndDeleteExitStatusSaysWhetherObjectsWereAcceptedRefusedOrOnlyStored(t *testing.T) {
	deployment := func(replicas string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: ` + replicas + `
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`
	}
	for _, c := range []struct {
		name    string
		policyd string
		doc     string
		verb    string
		timeout string
		// want is the exit status; stdout and stderr must contain these.
		want         int
		stdout       string
		stderr       []string
		notInStderr  string
		errorMessage string
	}{
		{name: "an object policyd accepts exits 0", policyd: policydRunning, doc: deployment("2"), verb: "apply", timeout: "20s",
			want: 0, stdout: "deployment.apps/web created (generation 1)", notInStderr: "not confirmed"},
		{name: "an object policyd refuses exits 1 with its reason", policyd: policydRunning, doc: deployment("10"), verb: "apply", timeout: "20s",
			want: 1, stderr: []string{"error: deployment.apps/web: spec.replicas"}, errorMessage: "1 object(s) rejected"},
		{name: "an object the validator refuses exits 1 and nothing is published", policyd: policydNever, doc: deployment("two"), verb: "apply", timeout: "1s",
			want: 1, stderr: []string{"nothing was applied"}, notInStderr: "stored on the bus"},
		{name: "an object stored while no policyd ever ran exits 3 and says so", policyd: policydNever, doc: deployment("2"), verb: "apply", timeout: "1s",
			want:         3,
			stderr:       []string{"deployment.apps/web stored on the bus, not confirmed within 1s: is policyd running? `flotilla get` will show it once handled"},
			errorMessage: "1 object(s) stored on the bus, not confirmed within 1s (policyd has never run against this NATS)"},
		{name: "an object stored while policyd is down exits 3 and says what waits for it", policyd: policydStopped, doc: deployment("2"), verb: "apply", timeout: "1s",
			want:         3,
			stderr:       []string{"deployment.apps/web stored on the bus, not confirmed within 1s: is policyd running?"},
			errorMessage: "1 object(s) stored on the bus, not confirmed within 1s (consumer policyd-input busy: 1 waiting, 0 unacknowledged)"},
		{name: "a deletion policyd confirms exits 0", policyd: policydRunning, doc: deployment("2"), verb: "delete", timeout: "20s",
			want: 0, stdout: "deployment.apps/web deleted", notInStderr: "not confirmed"},
		{name: "a deletion of an accepted object stored while policyd is down exits 3", policyd: policydStopped, doc: deployment("2"), verb: "delete", timeout: "1s",
			want:   3,
			stderr: []string{"deployment.apps/web stored on the bus, not confirmed within 1s: is policyd running?"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			url, bus := eventstest.Server(t)
			file := filepath.Join(t.TempDir(), "deploy.yaml")
			if err := os.WriteFile(file, []byte(c.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			switch c.policyd {
			case policydRunning:
				stop := startPolicyd(t, bus)
				defer stop()
				if c.verb == "delete" { // something to delete
					if _, errOut, err := runCLI(t, url, "apply", "-f", file, "--timeout", "20s"); err != nil {
						t.Fatalf("apply before delete: %v\n%s", err, errOut)
					}
				}
			case policydStopped: // it bound its consumer and handled one apply, of another generation
				stop := startPolicyd(t, bus)
				before := filepath.Join(t.TempDir(), "before.yaml")
				if err := os.WriteFile(before, []byte(deployment("1")), 0o600); err != nil {
					t.Fatal(err)
				}
				if _, errOut, err := runCLI(t, url, "apply", "-f", before, "--timeout", "20s"); err != nil {
					t.Fatalf("apply before policyd stops: %v\n%s", err, errOut)
				}
				stop()
			}
			start := time.Now()
			out, errOut, err := runCLI(t, url, c.verb, "-f", file, "--timeout", c.timeout)
			if diff := cmp.Diff(c.want, statusOf(err)); diff != "" {
				t.Fatalf("exit status (-want +got): %s\nerror: %v\nstdout: %s\nstderr: %s", diff, err, out, errOut)
			}
			if !strings.Contains(out, c.stdout) {
				t.Errorf("stdout lacks %q:\n%s", c.stdout, out)
			}
			for _, s := range c.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut)
				}
			}
			if c.notInStderr != "" && strings.Contains(errOut, c.notInStderr) {
				t.Errorf("stderr has %q:\n%s", c.notInStderr, errOut)
			}
			if c.errorMessage != "" {
				if diff := cmp.Diff(c.errorMessage, err.Error()); diff != "" {
					t.Errorf("error (-want +got): %s", diff)
				}
			}
			if c.want == 3 && time.Since(start) < time.Second {
				t.Errorf("gave up after %s, before its --timeout of 1s", time.Since(start))
			}
		})
	}
}
