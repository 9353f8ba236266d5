package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/schedulerd"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestCLI")

// seededBus starts a bus with policyd and schedulerd, three Ready members
// (Cluster objects, their health and capacity as healthd reports them)
// and seed 000 applied, and waits for its two templates' placements.
func seededBus(t *testing.T) (string, *natsbus.Bus) {
	t.Helper()
	url, bus := eventstest.Server(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p, err := policyd.New(policyd.Config{Instance: "0"}, policyd.Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	policydDone := make(chan struct{})
	go func() { _ = p.Run(ctx); close(policydDone) }()
	t.Cleanup(func() { cancel(); <-policydDone })
	s, err := schedulerd.New(schedulerd.DefaultConfig(), schedulerd.Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	dir := t.TempDir()
	clusters := filepath.Join(dir, "clusters.yaml")
	var docs []string
	for i, n := range []string{"cluster1", "cluster2", "cluster3"} {
		region := []string{"eu", "eu", "us"}[i]
		docs = append(docs, "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: "+n+"\n  labels: {region: "+region+"}\n"+
			"spec:\n  apiEndpoint: https://"+n+".example.com:6443\n  region: "+region+"\n")
	}
	if err := os.WriteFile(clusters, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runCLI(t, url, "apply", "-f", clusters, "--timeout", "20s"); err != nil {
		t.Fatalf("apply clusters: %v\n%s%s", err, out, errOut)
	}
	since := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	for _, n := range []string{"cluster1", "cluster2", "cluster3"} {
		publish(t, bus, events.HealthSubject(n), events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: n, Ready: true, State: events.ClusterStateReady,
			Conditions: []events.ClusterCondition{{Type: "Ready", Status: "True", Reason: "ClusterReady", Message: "cluster is healthy and ready", LastTransitionTime: since}},
			Since:      since, ObservedAt: since})
		publish(t, bus, events.CapacitySubject(n), events.TypeClusterCapacityReported, events.ClusterCapacity{Cluster: n, KubernetesVersion: "v1.31.0", Nodes: 1, ReadyNodes: 1})
	}
	if out, errOut, err := runCLI(t, url, "apply", "-f", "../../examples/seed000/", "--timeout", "20s"); err != nil {
		t.Fatalf("apply seed000: %v\n%s%s", err, out, errOut)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _, _ := runCLI(t, url, "get", "placements", "-o", "name")
		if strings.Count(out, "\n") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("seed000 not placed within 20s: %q", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return url, bus
}

func publish(t *testing.T, bus *natsbus.Bus, subject string, typ events.Type, data any) {
	t.Helper()
	e, err := events.New(typ, "/test", subject, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(context.Background(), subject, e); err != nil {
		t.Fatal(err)
	}
}

// stable replaces what changes from run to run (ages, times) with
// placeholders, so that output can be compared with a golden file.
var (
	timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ`)
	ages       = regexp.MustCompile(`(^|\s)\d+[smhd](\s|$)`)
)

func stable(s string) string {
	s = timestamps.ReplaceAllString(s, "TIME")
	for ages.MatchString(s) {
		s = ages.ReplaceAllString(s, "${1}AGE${2}")
	}
	return s
}

// Every kubectl form against a real bus with seed 000 applied: the exit
// status, and standard output and error as in testdata/cli/NAME.golden
// (go test -run TestCLI -update rewrites them).
func TestCLI(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url, _ := seededBus(t)
	for _, tt := range []struct {
		name     string
		args     string
		wantExit int
	}{
		{"get-clusters", "get clusters", 0},
		{"get-cluster-name", "get cluster cluster1", 0},
		{"get-cluster-slash-name", "get cluster/cluster1 -o name", 0},
		{"get-clusters-wide-labels", "get clusters -o wide --show-labels", 0},
		{"get-pp", "get pp", 0},
		{"get-op", "get op", 0},
		{"get-cpp-none", "get cpp", 0},
		{"get-policies-all", "get policies -A", 0},
		{"get-deploy-svc", "get deploy,svc", 0},
		{"get-deployments-name", "get deployments my-app", 0},
		{"get-deployment-slash-name", "get deployment/my-app", 0},
		{"get-templates-no-headers", "get templates --no-headers", 0},
		{"get-work", "get work", 0},
		{"get-work-name-wide", "get work my-app -o wide", 0},
		{"get-work-kind-name", "get work deploy/my-app", 0},
		{"get-placements-wide", "get placements -o wide", 0},
		{"get-jsonpath", "get deploy my-app -o jsonpath={.spec.replicas}", 0},
		{"get-custom-columns", "get deploy,svc -o custom-columns=NAME:.metadata.name,KIND:.kind,READY:.status.readyReplicas", 0},
		{"get-selector-name", "get deploy,svc -l app=my-app -o name", 0},
		{"get-pp-yaml", "get pp my-app-policy -o yaml", 0},
		{"get-clusters-yaml", "get clusters -o yaml", 0},
		{"get-work-yaml", "get work my-app -o yaml", 0},
		{"get-placements-name", "get placements -o name", 0},
		{"describe-work", "describe work my-app", 0},
		{"describe-deployment", "describe deployment/my-app", 0},
		{"describe-clusters", "describe clusters", 0},
		{"describe-pp", "describe pp my-app-policy", 0},
		{"describe-cpp-none", "describe cpp", 0},
		{"explain-kind-name", "explain deploy my-app", 0},
		{"explain-ambiguous", "explain my-app", 1},
		{"get-unknown-type", "get frobnicators", 1},
		{"get-missing-name", "get deploy nope", 1},
		{"get-jsonpath-empty", "get deploy my-app -o jsonpath=", 1},
		{"get-mixed-forms", "get deploy/my-app svc", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCLI(t, url, strings.Fields(tt.args)...)
			if err != nil {
				errOut += "error: " + err.Error() + "\n"
			}
			if diff := cmp.Diff(tt.wantExit, statusOf(err)); diff != "" {
				t.Errorf("flotilla %s: exit status (-want +got):\n%s\n%s%s", tt.args, diff, out, errOut)
			}
			got := "$ flotilla " + tt.args + "\n" + stable(out)
			if errOut != "" {
				got += "--- stderr\n" + stable(errOut)
			}
			golden := filepath.Join("testdata", "cli", tt.name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("flotilla %s (-want +got):\n%s", tt.args, diff)
			}
		})
	}

	t.Run("what get -o yaml prints, apply -f - applies back unchanged", func(t *testing.T) {
		yaml, _, err := runCLI(t, url, "get", "pp,op,deploy,svc", "-o", "yaml")
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, err := runCLIWithInput(t, url, yaml, "apply", "-f", "-", "--timeout", "10s")
		want := "propagationpolicy.policy.karmada.io/failover-policy unchanged\npropagationpolicy.policy.karmada.io/my-app-policy unchanged\noverridepolicy.policy.karmada.io/my-app-override unchanged\n" +
			"deployment.apps/my-app unchanged\nservice/my-app unchanged\n"
		if err != nil || out != want {
			t.Errorf("apply -f - of get -o yaml: %v\nwant:\n%s\ngot:\n%s%s", err, want, out, errOut)
		}
	})
	t.Run("get clusters -o yaml is what simulate takes as the fleet", func(t *testing.T) {
		fleet, _, err := runCLI(t, url, "get", "clusters", "-o", "yaml")
		if err != nil {
			t.Fatal(err)
		}
		out, errOut, err := runSimulate(t, fleet, "-f", "-", "-f", "../../examples/seed000/my-app.yaml", "-f", "../../examples/seed000/propagation-policy.yaml")
		if err != nil || !strings.Contains(out, "cluster1:3,cluster2:2,cluster3:1") {
			t.Errorf("simulate against the live clusters: %v\n%s%s", err, out, errOut)
		}
	})
}

// runCLIWithInput is runCLI with stdin.
func runCLIWithInput(t *testing.T, url, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := newRoot()
	var out, errw strings.Builder
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errw)
	root.SetArgs(append([]string{"--nats-url", url}, args...))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), errw.String(), err
}

// TestGetWorkAndPlacementsSelectByTheTemplatesLabels: -l on work and
// placements selects by the template's labels (`get work -l app=web` is
// get's own example); it matched the binding, which has none, so nothing.
func TestGetWorkAndPlacementsSelectByTheTemplatesLabels(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url, _ := seededBus(t)
	docs := writeFile(t, "web.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
`)
	if out, errOut, err := runCLI(t, url, "apply", "-f", docs, "--timeout", "20s"); err != nil {
		t.Fatalf("apply: %v\n%s%s", err, out, errOut)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, errOut, err := runCLI(t, url, "get", "work", "-l", "app=web")
		if err == nil && regexp.MustCompile(`(?m)^web\s+cluster1\s`).MatchString(out) && !strings.Contains(out, "my-app") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("get work -l app=web: %v\n%s%s", err, out, errOut)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if out, _, err := runCLI(t, url, "get", "placements", "-l", "app=web"); err != nil || !strings.Contains(out, "web") || strings.Contains(out, "my-app") {
		t.Errorf("get placements -l app=web: %v\n%s", err, out)
	}
	if out, errOut, err := runCLI(t, url, "get", "work", "-l", "app=none"); err != nil || out != "" || !strings.Contains(errOut, "No resources found") {
		t.Errorf("get work -l app=none: %v\n%s%s", err, out, errOut)
	}
}

// TestGetListsTheNamesFoundAndSaysWhichAreNot: as kubectl, `get deploy
// my-app nosuch` lists my-app, then says nosuch is not found (exit 1); it
// listed nothing.
func TestGetListsTheNamesFoundAndSaysWhichAreNot(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url, _ := seededBus(t)
	out, errOut, err := runCLI(t, url, "get", "deploy", "my-app", "nosuch")
	if statusOf(err) != 1 || !strings.Contains(out, "deployment/my-app -n default") || !strings.Contains(errOut+fmt.Sprint(err), "nosuch") {
		t.Errorf("get deploy my-app nosuch: exit %d\n%s%s%v", statusOf(err), out, errOut, err)
	}
}
