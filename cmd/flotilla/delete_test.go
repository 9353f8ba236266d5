package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// storedInputsOf are the CloudEvent subjects of the events of type typ
// stored on the input stream, oldest first.
func storedInputsOf(t *testing.T, bus *natsbus.Bus, typ events.Type) []string {
	t.Helper()
	ms, err := bus.Replay(context.Background(), events.StreamInput, natsbus.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		if m.Err == nil && events.Type(m.Event.Type()) == typ {
			out = append(out, m.Event.Subject())
		}
	}
	return out
}

// delete -f deletes what policyd accepted, as delete TYPE NAME does: -n is
// the namespace of the objects whose document names none (kubectl's -n),
// an object naming another namespace than -n is an error, and an object
// never accepted is not found (exit status 1) with nothing published for it.
func TestDeleteFromFilesTakesTheNamespaceFlagAndReportsObjectsNeverAcceptedAsNotFound(t *testing.T) {
	url, bus := eventstest.Server(t)
	stop := startPolicyd(t, bus)
	defer stop()
	configMap := func(namespace string) string {
		doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nons\n"
		if namespace != "" {
			doc += "  namespace: " + namespace + "\n"
		}
		return doc + "data: {colour: red}\n"
	}
	nons := writeFile(t, "nons.yaml", configMap(""))
	teamA := writeFile(t, "team-a.yaml", configMap("team-a"))
	teamB := writeFile(t, "team-b.yaml", configMap("team-b"))
	never := writeFile(t, "pos.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: neg}\nspec:\n  replicas: 1\n"+
		"  selector: {matchLabels: {app: neg}}\n  template:\n    metadata: {labels: {app: neg}}\n    spec: {containers: [{name: neg, image: nginx}]}\n")
	for _, f := range []string{nons, teamA} {
		if out, errOut, err := runCLI(t, url, "apply", "-f", f, "--timeout", "20s"); err != nil {
			t.Fatalf("apply %s: %v\n%s%s", f, err, out, errOut)
		}
	}
	for _, c := range []struct {
		name     string
		args     []string
		wantExit int
		// wantOut is stdout; wantErr is in stderr or the error.
		wantOut, wantErr string
		// wantDeleted are the subjects of the deletions this step stores.
		wantDeleted []string
	}{
		{"-n names the namespace of an object whose file names none", []string{"-f", nons, "-n", "team-a"}, 0,
			"configmap/nons deleted\n", "", []string{"team-a/ConfigMap/nons"}},
		{"deleted once, it is not found the next time and nothing is published", []string{"-f", nons, "-n", "team-a"}, 1,
			"", nons + ": configmap/nons not found in namespace team-a", nil},
		{"an object whose namespace is not -n is an error", []string{"-f", teamB, "-n", "team-a"}, 1,
			"", `the namespace from the provided object "team-b" does not match the namespace "team-a"`, nil},
		{"an object never applied is not found and nothing is published", []string{"-f", never}, 1,
			"", never + ": deployment.apps/neg not found in namespace default", nil},
		{"without -n an object whose file names no namespace is in default", []string{"-f", never, "-f", nons}, 1,
			"configmap/nons deleted\n", "deployment.apps/neg not found", []string{"default/ConfigMap/nons"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkRequests(t, url, bus, events.TypeObjectDeleted, append([]string{"delete", "--timeout", "20s"}, c.args...),
				c.wantExit, c.wantOut, c.wantErr, c.wantDeleted)
		})
	}
}

// checkRequests runs the CLI with args and checks its exit status, its
// standard output (wantOut, whole), that wantErr is in its standard error
// or error, and the subjects of the events of type typ it stored on the
// input stream (want).
func checkRequests(t *testing.T, url string, bus *natsbus.Bus, typ events.Type, args []string, wantExit int, wantOut, wantErr string, want []string) {
	t.Helper()
	before := len(storedInputsOf(t, bus, typ))
	out, errOut, err := runCLI(t, url, args...)
	if diff := cmp.Diff(wantExit, statusOf(err)); diff != "" {
		t.Fatalf("flotilla %s: exit status (-want +got): %s\nerror: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), diff, err, out, errOut)
	}
	if diff := cmp.Diff(wantOut, out); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if err != nil {
		errOut += err.Error()
	}
	if !strings.Contains(errOut, wantErr) {
		t.Errorf("stderr lacks %q:\n%s", wantErr, errOut)
	}
	got := storedInputsOf(t, bus, typ)[before:]
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s events stored (-want +got):\n%s", typ, diff)
	}
}

// Every example folder ships stand-in Cluster files (no secretRef), and
// `delete -f examples/<dir>/` unjoined the real members behind them
// without a word. delete -f now keeps a joined cluster whose document has
// no secretRef, saying how to remove it, and deletes the rest; delete
// cluster NAME still removes it.
func TestDeleteFromFilesKeepsAJoinedClusterItsFileOnlyStandsIn(t *testing.T) {
	url, bus := joinBus(t)
	if out, errOut, err := runCLI(t, url, "join", "c1", "--cluster-kubeconfig", writeKubeconfig(t, "c1.kubeconfig", "https://127.0.0.1:1", "m")); err != nil {
		t.Fatalf("join c1: %v\n%s%s", err, out, errOut)
	}
	settings := writeFile(t, "settings.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {colour: red}\n")
	dir := filepath.Dir(settings)
	clusters := filepath.Join(dir, "clusters.yaml")
	if err := os.WriteFile(clusters, []byte("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: c1, labels: {region: east}}\nspec: {apiEndpoint: https://c1.example}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runCLI(t, url, "apply", "-f", settings, "--timeout", "20s"); err != nil {
		t.Fatalf("apply settings: %v\n%s%s", err, out, errOut)
	}
	checkRequests(t, url, bus, events.TypeObjectDeleted, []string{"delete", "-f", dir, "--timeout", "20s"}, 0,
		"configmap/settings deleted\n", "cluster c1 kept: it is joined with the credentials in secret karmada-system/c1-kubeconfig, "+
			"and this file's Cluster has no spec.secretRef; flotilla unjoin c1 removes it", []string{"default/ConfigMap/settings"})
	checkRequests(t, url, bus, events.TypeObjectDeleted, []string{"delete", "-f", clusters, "--timeout", "20s"}, 0,
		"", "cluster c1 kept", nil)
	if out, _, err := runCLI(t, url, "get", "cluster", "c1"); err != nil || !strings.Contains(out, "c1") {
		t.Errorf("c1 is gone after delete -f: %v\n%s", err, out)
	}
	checkRequests(t, url, bus, events.TypeObjectDeleted, []string{"delete", "cluster", "c1", "--timeout", "20s"}, 0,
		"cluster.cluster.karmada.io/c1 deleted\n", "", []string{"_/Cluster.cluster.karmada.io/c1"})
}
