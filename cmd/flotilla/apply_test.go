package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events/eventstest"
)

// runCLI runs the flotilla command line against url and returns its
// standard output and error.
func runCLI(t *testing.T, url string, args ...string) (string, string, error) {
	t.Helper()
	return runCLIWithInput(t, url, "", args...)
}

// flotilla apply waits for policyd's answer to every object; for a template
// a policy claims that answer is the binding (DESIGN.md decision 15), and
// `flotilla get` and KIND/NAME lookups read the template from it.
// busWithPolicyd starts a NATS server and policyd on it, for the test's
// length, and returns the server's URL.
func busWithPolicyd(t *testing.T) string {
	t.Helper()
	url, bus := eventstest.Server(t)
	t.Cleanup(startPolicyd(t, bus))
	return url
}

func TestApplyIsConfirmedForAClaimedTemplateWhichGetListsAndFindsByName(t *testing.T) {
	url := busWithPolicyd(t)

	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pol := write("policy.yaml", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
`)
	deploy := `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`
	out, errOut, err := runCLI(t, url, "apply", "-f", pol, "--timeout", "10s")
	if err != nil || !strings.Contains(out, "propagationpolicy.policy.karmada.io/web created (generation 1)") {
		t.Fatalf("apply policy: %v\n%s%s", err, out, errOut)
	}
	apply := func(replicas, want string) {
		t.Helper()
		out, errOut, err := runCLI(t, url, "apply", "-f", write("deploy.yaml", strings.Replace(deploy, "REPLICAS", replicas, 1)), "--timeout", "10s")
		if err != nil || !strings.Contains(out, "deployment.apps/web "+want) || strings.Contains(errOut, "not confirmed") {
			t.Fatalf("apply (replicas %s): want %q: %v\n%s%s", replicas, want, err, out, errOut)
		}
	}
	apply("2", "created (generation 1)")
	apply("3", "configured (generation 2)")
	// Only bindings were stored for the Deployment so far; a KIND/NAME
	// lookup (here a reschedule request) still finds it.
	out, errOut, err = runCLI(t, url, "reschedule", "deployment/web", "-n", "shop")
	if err != nil || !strings.Contains(out, "reschedule requested") {
		t.Fatalf("reschedule: %v\n%s%s", err, out, errOut)
	}
	apply("3", "unchanged") // identical: nothing is published

	// `flotilla get deployments` lists it, with the policy that claims it.
	out, errOut, err = runCLI(t, url, "get", "deployments", "-n", "shop")
	if err != nil || !regexp.MustCompile(`(?m)^web\s+Deployment\s+-\s+2\s+propagationpolicy/web\s`).MatchString(out) {
		t.Fatalf("get deployments: %v\n%s%s", err, out, errOut)
	}
	out, _, err = runCLI(t, url, "get", "templates", "-A", "-o", "json")
	var listed struct {
		Kind  string `json:"kind"`
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name       string `json:"name"`
				Generation int64  `json:"generation"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err != nil || json.Unmarshal([]byte(out), &listed) != nil || listed.Kind != "List" || len(listed.Items) != 1 || listed.Items[0].Kind != "Deployment" ||
		listed.Items[0].Metadata.Generation != 2 || listed.Items[0].Metadata.Name != "web" {
		t.Fatalf("get templates -A -o json: %v\n%s", err, out)
	}
	if _, errOut, err = runCLI(t, url, "get", "statefulsets", "-n", "shop"); err != nil || !strings.Contains(errOut, "No resources found in shop namespace.") {
		t.Fatalf("get statefulsets: %v %q", err, errOut)
	}
	if _, _, err = runCLI(t, url, "get", "frobnicators"); err == nil || !strings.Contains(err.Error(), `doesn't have a resource type "frobnicators"`) {
		t.Fatalf("get frobnicators: %v", err)
	}
	// kubectl's ways of naming kinds and of saying "none".
	for _, c := range []struct{ args, stdout, stderr string }{
		{"get deployments.apps -n shop", "web", ""},
		{"get deploy -n shop", "web", ""},
		{"get deployments.example.com -n shop", "", "No resources found in shop namespace."},
		{"get po -n shop", "", "No resources found in shop namespace."},
		{"get clusterroles", "", "No resources found\n"},
		{"get statefulsets -n shop -o json", `"items": []`, ""},
		{"get cpp", "", "No resources found\n"},
		{"get pp -n shop -o name", "propagationpolicy.policy.karmada.io/web\n", ""},
		{"get pp,deploy web -n shop -o name", "propagationpolicy.policy.karmada.io/web\ndeployment.apps/web\n", ""},
		{"get deploy/web -n shop -o jsonpath={.spec.replicas}", "3", ""},
	} {
		out, errOut, err := runCLI(t, url, strings.Fields(c.args)...)
		if err != nil || !strings.Contains(out, c.stdout) || !strings.Contains(errOut, c.stderr) {
			t.Errorf("flotilla %s: %v\nstdout: %s\nstderr: %s", c.args, err, out, errOut)
		}
	}
	// Overlapping --subject filters are read one by one and merged.
	one, _, err := runCLI(t, url, "replay", "--since", "1h", "--subject", "flotilla.binding.>")
	both, errOut, err2 := runCLI(t, url, "replay", "--since", "1h", "--subject", "flotilla.binding.>", "--subject", "flotilla.binding.shop.>")
	if err != nil || err2 != nil || one != both || strings.Count(one, "binding.changed") < 2 {
		t.Fatalf("replay with overlapping subjects: %v %v %s\n%s\n---\n%s", err, err2, errOut, one, both)
	}
	// The policy deleted, the Deployment stays where it was (as in
	// Karmada) but no policy claims it any more.
	if out, errOut, err = runCLI(t, url, "delete", "propagationpolicy/web", "-n", "shop"); err != nil {
		t.Fatalf("delete policy: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = runCLI(t, url, "get", "deployments", "-n", "shop")
	if err != nil || !regexp.MustCompile(`(?m)^web\s+Deployment\s+-\s+2\s+<none>\s`).MatchString(out) {
		t.Fatalf("get deployments after the policy's deletion: %v\n%s%s", err, out, errOut)
	}
}
