package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// version, diff, scale, reschedule's selections and unjoin against a real
// bus with seed 000 applied; the steps share the bus, in order.
func TestVerbs(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url, _ := seededBus(t)
	changed := filepath.Join(t.TempDir(), "changed.yaml")
	yaml, _, err := runCLI(t, url, "get", "deploy", "my-app", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changed, []byte(strings.Replace(yaml, "replicas: 6", "replicas: 9", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	unchanged := filepath.Join(t.TempDir(), "unchanged.yaml")
	if err := os.WriteFile(unchanged, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		args     string
		stdin    string
		wantExit int
		// want are what stdout (then stderr) must contain, in order.
		want []string
	}{
		{"version names the CLI, the NATS server and the daemons' consumers", "version", "", 0,
			[]string{"Client Version: ", "NATS Server:    2.", "policyd-input", "schedulerd-policy"}},
		{"--version is version", "--version", "", 0, []string{"Client Version: ", "NATS Server:"}},
		{"diff of what is accepted shows nothing and exits 0", "diff -f " + unchanged, "", 0, nil},
		{"diff of a change is a unified diff and exits 1", "diff -f " + changed, "", 1,
			[]string{"--- accepted/deployment.apps/my-app\n+++ applied/deployment.apps/my-app\n", "-  replicas: 6\n+  replicas: 9\n"}},
		{"scale applies the template with the new replicas", "scale deployment/my-app --replicas 4 --timeout 20s", "", 0,
			[]string{"deployment.apps/my-app scaled (generation 2)"}},
		{"scale of a type without a name is refused, as kubectl does", "scale deployments --replicas 5 --timeout 20s", "", 1, nil},
		{"scale to a negative count says so", "scale deployment/my-app --replicas -1", "", 1, nil},
		{"the scaled template has its replicas", "get deploy my-app -o jsonpath={.spec.replicas}", "", 0, []string{"4"}},
		{"reschedule --policy takes every template the policy claims", "reschedule --policy my-app-policy", "", 0,
			[]string{"service/my-app reschedule requested\n"}},
		{"reschedule -l takes the templates whose labels match", "reschedule -l app=my-app", "", 0,
			[]string{"deployment.apps/my-app reschedule requested\n"}},
		{"reschedule --all takes every template", "reschedule --all", "", 0,
			[]string{"deployment.apps/my-app reschedule requested\nservice/my-app reschedule requested\n"}},
		{"reschedule of a kind and a name", "reschedule deploy,svc my-app", "", 0,
			[]string{"deployment.apps/my-app reschedule requested\nservice/my-app reschedule requested\n"}},
		{"unjoin asks, and a no changes nothing", "unjoin cluster3 --cascade=orphan", "n\n", 1,
			[]string{"", "unjoin cluster3: 1 template(s) have work there, left in the member (--cascade=orphan)", "service/my-app -n default", "Continue? [y/N] "}},
		{"unjoin by default moves the work off the member first, then removes it", "unjoin cluster2 --yes --drain 30s --timeout 20s", "", 0,
			[]string{"cluster.cluster.karmada.io/cluster2 tainted flotilla.io/unjoining:NoExecute (generation 2)\n", "cluster.cluster.karmada.io/cluster2 deleted\n"}},
		{"no placement lists the unjoined cluster", "get placements -o wide", "", 0, []string{"cluster1:4 ", "cluster2(TaintUntolerated,kept)"}},
		{"unjoin --cascade=orphan removes the Cluster and its credentials", "unjoin cluster3 --cascade=orphan --timeout 20s", "y\n", 0,
			[]string{"cluster.cluster.karmada.io/cluster3 deleted\n"}},
		{"an unjoined cluster is gone", "get clusters -o name", "", 0, []string{"cluster.cluster.karmada.io/cluster1\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCLIWithInput(t, url, tt.stdin, strings.Fields(tt.args)...)
			if got := statusOf(err); got != tt.wantExit {
				t.Errorf("flotilla %s: exit status %d, want %d (%v)\n%s%s", tt.args, got, tt.wantExit, err, out, errOut)
			}
			if len(tt.want) == 0 && tt.wantExit == 0 && out != "" {
				t.Errorf("flotilla %s printed %q, want nothing", tt.args, out)
			}
			for i, w := range tt.want {
				where := out
				if i > 0 && tt.want[0] == "" {
					where = errOut
				}
				if !strings.Contains(where, w) {
					t.Errorf("flotilla %s: want %q in:\n%s\n--- stderr\n%s", tt.args, w, out, errOut)
				}
			}
		})
	}
}

// Completion offers the resource types, the names of the objects of a type
// (read from the bus) and the -o values; get -w prints a row again when it
// changes, and once more when its object is deleted.
func TestCompletionAndWatch(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url, bus := seededBus(t)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "get", ""}, []string{"clusters\n", "propagationpolicies\n", "deployments\n", "work\n"}},
		{[]string{"__complete", "get", "clusters", ""}, []string{"cluster1\ncluster2\ncluster3\n"}},
		{[]string{"__complete", "get", "deploy/"}, []string{"deploy/my-app\n"}},
		{[]string{"__complete", "describe", "pp", ""}, []string{"failover-policy\nmy-app-policy\n"}},
		{[]string{"__complete", "get", "clusters", "-o", ""}, []string{"json\nyaml\nname\nwide\njsonpath=\ncustom-columns=\n"}},
	} {
		out, _, err := runCLI(t, url, tt.args...)
		for _, w := range tt.want {
			if err != nil || !strings.Contains(out, w) {
				t.Errorf("flotilla %s: want %q in %q (%v)", strings.Join(tt.args, " "), w, out, err)
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root := newRoot()
	out := &syncBuffer{}
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs([]string{"--nats-url", url, "get", "clusters", "-w"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	// Each wait has its own 20 s: on a machine loaded by the e2e suite the
	// listing alone once took most of one shared 10 s.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "cluster3") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	publish(t, bus, events.HealthSubject("cluster3"), events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "cluster3", State: events.ClusterStateUnreachable,
		Conditions: []events.ClusterCondition{{Type: "Ready", Status: "Unknown", Reason: "ClusterUnreachable"}}, Since: time.Now(), ObservedAt: time.Now()})
	deadline = time.Now().Add(20 * time.Second)
	for !regexp.MustCompile(`(?m)^cluster3\s+v1.31.0\s+Push\s+Unknown`).MatchString(out.String()) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if _, _, err := runCLI(t, url, "delete", "cluster", "cluster2"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for strings.Count(out.String(), "cluster2") < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
	if got := out.String(); strings.Count(got, "cluster3") != 2 || strings.Count(got, "NAME") != 1 || !regexp.MustCompile(`(?m)^cluster3\s+v1.31.0\s+Push\s+Unknown`).MatchString(got) {
		t.Errorf("get clusters -w: want the list, then cluster3's row again as Unknown (no header):\n%s", got)
	}
	if got := out.String(); strings.Count(got, "cluster2") != 2 {
		t.Errorf("get clusters -w: want cluster2's row printed once more when it is deleted, as kubectl's watch does:\n%s", got)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
