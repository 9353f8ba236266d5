package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

// apply and diff take kubectl's -n (the namespace of the objects whose
// document names none; an object naming another is an error) and -R (the
// directories' subdirectories too), as delete does.
func TestApplyAndDiffTakeTheNamespaceFlagAndReadDirectoriesRecursively(t *testing.T) {
	url, bus := eventstest.Server(t)
	stop := startPolicyd(t, bus)
	defer stop()
	dir := t.TempDir()
	configMap := func(name, namespace string) string {
		doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
		if namespace != "" {
			doc += "  namespace: " + namespace + "\n"
		}
		return doc + "data: {colour: red}\n"
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{"top.yaml": configMap("top", ""), "sub/deep.yaml": configMap("deep", "")} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	teamB := writeFile(t, "team-b.yaml", configMap("b", "team-b"))
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.MkdirAll(filepath.Join(empty, "nothing-here"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name             string
		args             []string
		wantExit         int
		wantOut, wantErr string
		wantApplied      []string
	}{
		{"-n places an object whose document names no namespace; without -R a directory is read without its subdirectories",
			[]string{"apply", "-f", dir, "-n", "team-a"}, 0, "configmap/top created (generation 1)\n", "", []string{"team-a/ConfigMap/top"}},
		{"-R reads the subdirectories too",
			[]string{"apply", "-R", "-f", dir, "-n", "team-a"}, 0, "configmap/top unchanged\nconfigmap/deep created (generation 1)\n", "", []string{"team-a/ConfigMap/deep"}},
		{"an object naming another namespace than -n is an error and nothing is applied",
			[]string{"apply", "-f", teamB, "-f", dir, "-n", "team-a"}, 1, "", `the namespace from the provided object "team-b" does not match the namespace "team-a": pass -n team-b to apply it`, nil},
		{"-R on a tree without manifests names the directory",
			[]string{"apply", "-R", "-f", empty}, 1, "", "no .yaml, .yml or .json files in the directory or below it", nil},
		{"diff compares in the namespace -n gives: nothing would change",
			[]string{"diff", "-R", "-f", dir, "-n", "team-a"}, 0, "", "", nil},
		{"diff -n mismatch is an error (exit status 2)",
			[]string{"diff", "-f", teamB, "-n", "team-a"}, 2, "", "pass -n team-b to diff it", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args[0] == "apply" {
				args = append(args, "--timeout", "20s")
			}
			checkRequests(t, url, bus, events.TypeObjectApplied, args, c.wantExit, c.wantOut, c.wantErr, c.wantApplied)
		})
	}

	// A policy applied with -n selects in that namespace: its selectors'
	// default namespace is -n's, so it claims a Deployment applied there.
	team := t.TempDir()
	for name, doc := range map[string]string{
		"policy.yaml": "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: team-policy}\nspec:\n" +
			"  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n  placement: {clusterAffinity: {clusterNames: [c1]}}\n",
		"web.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: team-web}\nspec:\n  replicas: 1\n" +
			"  selector: {matchLabels: {app: w}}\n  template:\n    metadata: {labels: {app: w}}\n    spec: {containers: [{name: w, image: nginx}]}\n",
	} {
		if err := os.WriteFile(filepath.Join(team, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, errOut, err := runCLI(t, url, "apply", "-f", team, "-n", "team-c", "--timeout", "20s"); err != nil {
		t.Fatalf("apply -n team-c: %v\n%s%s", err, out, errOut)
	}
	if out, _, err := runCLI(t, url, "get", "deploy", "-n", "team-c"); err != nil || !strings.Contains(out, "propagationpolicy/team-policy") {
		t.Errorf("get deploy -n team-c: %v\n%s\nwant it claimed by propagationpolicy/team-policy", err, out)
	}
}

// Every command refuses a --timeout that is not positive before doing
// anything, and reads -n "" as the default namespace, as kubectl does.
func TestATimeoutMustBePositiveAndAnEmptyNamespaceIsDefault(t *testing.T) {
	url, _ := eventstest.Server(t)
	for _, args := range [][]string{
		{"apply", "-f", "missing.yaml", "--timeout", "-5s"},
		{"delete", "deploy", "x", "--timeout", "0s"},
		{"join", "c1", "--kubeconfig", "missing", "--timeout", "-1m"},
	} {
		_, _, err := runCLI(t, url, args...)
		if err == nil || !strings.Contains(err.Error(), "for --timeout: must be more than 0") {
			t.Errorf("flotilla %s: error %v, want the timeout refused", strings.Join(args, " "), err)
		}
	}
	_, errOut, err := runCLI(t, url, "get", "statefulsets", "-n", "")
	if err != nil || !strings.Contains(errOut, "No resources found in default namespace.") {
		t.Errorf("get statefulsets -n '': %v, stderr %q; want the default namespace's empty list", err, errOut)
	}
}

// TestACustomResourceOfANamespacedKindGetsTheNamespace: a Widget naming no
// namespace, whose CustomResourceDefinition is Namespaced (in the same
// file, or accepted before), goes to -n's namespace, or default, as a
// built-in kind does; it was taken for cluster-scoped and failed in every
// member. A kind of Cluster scope stays without one.
func TestACustomResourceOfANamespacedKindGetsTheNamespace(t *testing.T) {
	url, bus := eventstest.Server(t)
	defer startPolicyd(t, bus)()
	crd := func(kind, scope string) string {
		lower := strings.ToLower(kind)
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: " + lower + "s.example.com}\n" +
			"spec:\n  group: example.com\n  scope: " + scope + "\n  names: {plural: " + lower + "s, singular: " + lower + ", kind: " + kind + "}\n" +
			"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]\n"
	}
	cr := func(kind, name string) string {
		return "apiVersion: example.com/v1\nkind: " + kind + "\nmetadata: {name: " + name + "}\nspec: {size: 1}\n"
	}
	for _, step := range []struct {
		what string
		args []string
		want string
	}{
		{"a definition and its resource in one file", []string{"apply", "-f", writeFile(t, "w1.yaml", crd("Widget", "Namespaced")+"---\n"+cr("Widget", "w1"))}, "default/Widget.example.com/w1"},
		{"the definition accepted before, and -n", []string{"apply", "-n", "team-x", "-f", writeFile(t, "w2.yaml", cr("Widget", "w2"))}, "team-x/Widget.example.com/w2"},
		{"a kind of Cluster scope", []string{"apply", "-f", writeFile(t, "g1.yaml", crd("Gadget", "Cluster")+"---\n"+cr("Gadget", "g1"))}, "_/Gadget.example.com/g1"},
	} {
		if out, errOut, err := runCLI(t, url, append(step.args, "--timeout", "20s")...); err != nil {
			t.Fatalf("%s: %v\n%s%s", step.what, err, out, errOut)
		}
		p, err := readPublished(context.Background(), bus)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for k := range p.Records {
			found = found || k.String() == step.want
		}
		if !found {
			var keys []string
			for k := range p.Records {
				keys = append(keys, k.String())
			}
			t.Errorf("%s: no record %s among %v", step.what, step.want, keys)
		}
	}
}
