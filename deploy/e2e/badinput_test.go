package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestBadInputGetsAClearErrorOrADeadLetterAndTheDaemonsKeepServing: a
// malformed policy is refused by the CLI with file, line and field path and
// nothing is published; an unknown event type and a bad payload arriving on
// the bus are dead-lettered with the reason; policyd keeps serving.
func TestBadInputGetsAClearErrorOrADeadLetterAndTheDaemonsKeepServing(t *testing.T) {
	s := newSystem(t)
	s.start("policyd")
	s.waitDaemonsReady("policyd")
	bad := filepath.Join(s.dir, "bad-policy.yaml")
	if err := os.WriteFile(bad, []byte(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: broken
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
  placement:
    replicaScheduling:
      replicaSchedulingType: Dividd
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := s.cli("apply", "-f", bad)
	if code != 1 || !strings.Contains(stderr, "bad-policy.yaml") || !strings.Contains(stderr, "spec.placement.replicaScheduling.replicaSchedulingType") || !strings.Contains(stderr, "line 11") {
		t.Fatalf("apply of a malformed policy: exit %d, stderr:\n%s", code, stderr)
	}
	bus, err := natsbus.Connect(context.Background(), s.natsURL, natsbus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	if in, _ := bus.Replay(context.Background(), events.StreamInput, natsbus.ReplayOptions{}); len(in) != 0 {
		t.Fatalf("the refused apply published %d events", len(in))
	}

	// An unknown kind of event and a bad payload, as an external system
	// might send them (publish refuses both unless --validate=false).
	unknown := filepath.Join(s.dir, "unknown.json")
	_ = os.WriteFile(unknown, []byte(`{"specversion":"1.0","type":"com.example.coffee.brewed.v1","source":"/kitchen","id":"e2e-unknown-1","data":{"cups":2}}`), 0o644)
	s.mustCLI("publish", "-f", unknown, "--validate=false")
	badPayload := filepath.Join(s.dir, "bad-payload.json")
	_ = os.WriteFile(badPayload, []byte(`{"specversion":"1.0","type":"io.flotilla.object.applied.v1","source":"/ci","id":"e2e-bad-1","subject":"default/Deployment/x","data":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replicas":"many"}}}`), 0o644)
	s.mustCLI("publish", "-f", badPayload, "--validate=false")

	eventually(t, 30*time.Second, "two dead letters with reasons", func() error {
		ms, err := bus.Replay(context.Background(), events.StreamDeadLetter, natsbus.ReplayOptions{})
		if err != nil {
			return err
		}
		var reasons []string
		for _, m := range ms {
			var dl events.DeadLetter
			if m.Err == nil && events.Decode(m.Event, &dl) == nil {
				reasons = append(reasons, dl.Reason)
			}
		}
		all := strings.Join(reasons, "\n")
		if len(reasons) != 2 || !strings.Contains(all, "unknown event type") || !strings.Contains(all, "spec.replicas") {
			return fmt.Errorf("dead letters: %q", reasons)
		}
		return nil
	})

	// policyd still serves: a good policy is accepted.
	good := filepath.Join(s.dir, "good.yaml")
	_ = os.WriteFile(good, []byte(strings.Replace(mustRead(t, bad), "Dividd", "Divided", 1)), 0o644)
	out := s.mustCLI("apply", "-f", good)
	if !strings.Contains(out, "propagationpolicy.policy.karmada.io/broken created") {
		t.Fatalf("good apply after poison events: %s", out)
	}
	if out := s.mustCLI("get", "policies", "-A", "-o", "name"); out != "propagationpolicy.policy.karmada.io/broken\n" {
		t.Fatalf("get policies: %q", out)
	}
}

func mustRead(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
