package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/policyd"
)

// An object every member would refuse is refused by apply: exit 1, each
// problem naming the file, the line and the field path, and nothing on the
// bus.
func TestApplyRefusesWhatMembersWouldRefuseNamingFileLineAndField(t *testing.T) {
	url, bus := eventstest.Server(t)
	ctx := context.Background()
	if err := bus.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "bad.yaml")
	doc := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: Bad_Name!
  namespace: shop
spec:
  replicas: -1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
---
apiVersion: v1
kind: ConfigMap
metadata: {name: big, namespace: shop}
data:
  blob: ` + strings.Repeat("x", 5<<20) + "\n"
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runCLI(t, url, "apply", "-f", file, "--timeout", "2s")
	var exit exitError
	if !errors.As(err, &exit) {
		t.Fatalf("apply: want an exit error (status 1), got %v\n%s", err, errOut)
	}
	for _, want := range []string{
		file + ": document 1: line 4: metadata.name: invalid value \"Bad_Name!\"",
		file + ": document 1: line 7: spec.replicas: invalid value -1: must be greater than or equal to 0",
		file + ": document 1: line 13: spec.template.spec.containers[0].image: required value",
		file + ": document 2: line 18: data: too long: must have at most 1048576 bytes",
		"nothing was applied: 4 error(s)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	published, err := bus.LatestPerSubject(ctx, events.StreamInput, events.AllInput)
	if err != nil || len(published) != 0 {
		t.Fatalf("the input stream holds %d events (%v), want none", len(published), err)
	}
}

// policyd's --max-replicas reaches the user of apply: the template is
// rejected with the reason and apply exits 1.
func TestApplyReportsATemplateAboveMaxReplicasAsRejected(t *testing.T) {
	url, bus := eventstest.Server(t)
	d, err := policyd.New(policyd.Config{Instance: "0", MaxReplicas: 100000}, policyd.Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = d.Run(ctx) }()
	file := filepath.Join(t.TempDir(), "big.yaml")
	doc := `apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: shop}
spec:
  replicas: 2147483647
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec: {containers: [{name: web, image: nginx}]}
`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runCLI(t, url, "apply", "-f", file, "--timeout", "10s")
	var exit exitError
	want := "error: deployment.apps/big: spec.replicas: invalid value 2147483647: more than the 100000 replicas this policyd accepts (--max-replicas)"
	if !errors.As(err, &exit) || !strings.Contains(errOut, want) {
		t.Fatalf("apply: want exit 1 and %q, got %v\n%s", want, err, errOut)
	}
}
