package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/readmodel"
)

// joinBus starts a bus with policyd and a credentials key announced, as
// flotilla up has them before any member joins.
func joinBus(t *testing.T) (string, *natsbus.Bus) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url, bus := eventstest.Server(t)
	t.Cleanup(startPolicyd(t, bus))
	key, err := sealing.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if err := sealing.Announce(context.Background(), bus, key, "/test"); err != nil {
		t.Fatal(err)
	}
	return url, bus
}

// writeKubeconfig writes a token kubeconfig for server (nothing listens
// there: join's cluster-admin check fails at once and says nothing) whose
// current-context is current.
func writeKubeconfig(t *testing.T, name, server, current string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: m, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: m, context: {cluster: m, user: u}}]
current-context: %s
`, server, current)
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// inputMessages counts the requests stored on the input stream.
func inputMessages(t *testing.T, bus *natsbus.Bus) uint64 {
	t.Helper()
	s, err := bus.JetStream().Stream(context.Background(), events.StreamInput)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// A join policyd would refuse, or whose kubeconfig names no server, fails
// before anything is published or created in the member: the error names
// the field path (validated with policyd's validator) or the kubeconfig
// file and its context.
func TestJoinRefusesBadInputBeforePublishingAnything(t *testing.T) {
	url, bus := joinBus(t)
	good := writeKubeconfig(t, "c1.kubeconfig", "https://127.0.0.1:1", "m")
	if out, errOut, err := runCLI(t, url, "join", "c1", "--cluster-kubeconfig", good); err != nil {
		t.Fatalf("join c1: %v\n%s%s", err, out, errOut)
	}
	fresh := writeKubeconfig(t, "fresh.kubeconfig", "https://127.0.0.1:2", "m")
	nope := writeKubeconfig(t, "nope.kubeconfig", "https://127.0.0.1:3", "nope")
	serverless := writeKubeconfig(t, "serverless.kubeconfig", "", "m")
	for _, tt := range []struct {
		name       string
		args       []string
		wantStderr string
		wantErr    string
	}{
		{"a cluster name that is no DNS label", []string{"join", "Bad_Name", "--cluster-kubeconfig", fresh},
			"error: cluster.cluster.karmada.io/Bad_Name: metadata.name: ", "invalid input"},
		{"a bad label on a joined cluster leaves its kubeconfig as it is", []string{"join", "c1", "--cluster-kubeconfig", good, "--labels", "Bad Key=v"},
			`error: cluster.cluster.karmada.io/c1: metadata.labels[Bad Key]: invalid key "Bad Key"`, "invalid input"},
		{"a bad name with --create-service-account touches no member", []string{"join", "Bad_Name", "--cluster-kubeconfig", fresh, "--create-service-account"},
			"error: cluster.cluster.karmada.io/Bad_Name: metadata.name: ", "invalid input"},
		{"a current-context that names no context", []string{"join", "c2", "--cluster-kubeconfig", nope},
			"", "--cluster-kubeconfig " + nope + `: current-context "nope": no such context (it has m)`},
		{"a current context whose cluster has no server", []string{"join", "c2", "--cluster-kubeconfig", serverless},
			"", "--cluster-kubeconfig " + serverless + `: context "m": cluster "m" has no server`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := inputMessages(t, bus)
			out, errOut, err := runCLI(t, url, tt.args...)
			if diff := cmp.Diff(1, statusOf(err)); diff != "" {
				t.Errorf("exit status (-want +got):\n%s\n%v\n%s%s", diff, err, out, errOut)
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			if !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("stderr:\n%s\nwant it to have:\n%s", errOut, tt.wantStderr)
			}
			if diff := cmp.Diff("", out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, inputMessages(t, bus)); diff != "" {
				t.Errorf("requests published (-want +got):\n%s", diff)
			}
		})
	}
}

// TestJoiningAgainKeepsWhatTheFlagsDoNotSet: a cluster joined again (new
// credentials, a new server) keeps its labels, region and taints unless a
// flag sets them; join replaced the whole Cluster, so a re-join to rotate
// credentials dropped the labels its policies select it by.
func TestJoiningAgainKeepsWhatTheFlagsDoNotSet(t *testing.T) {
	url, bus := joinBus(t)
	kc := writeKubeconfig(t, "c1.kubeconfig", "https://127.0.0.1:1", "m")
	if out, errOut, err := runCLI(t, url, "join", "c1", "--cluster-kubeconfig", kc, "--labels", "city=beijing", "--region", "cn-north"); err != nil {
		t.Fatalf("join c1: %v\n%s%s", err, out, errOut)
	}
	taint := writeFile(t, "c1.yaml", `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: c1, labels: {city: beijing}}
spec:
  apiEndpoint: https://127.0.0.1:1
  region: cn-north
  secretRef: {namespace: karmada-system, name: c1-kubeconfig}
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
`)
	if out, errOut, err := runCLI(t, url, "apply", "-f", taint); err != nil {
		t.Fatalf("apply the taint: %v\n%s%s", err, out, errOut)
	}
	eventstest.Eventually(t, "the taint in c1's registration", func() bool {
		members, err := readClusters(context.Background(), bus)
		return err == nil && len(members) == 1 && len(members[0].Registration.Spec.Taints) == 1
	})
	moved := writeKubeconfig(t, "c1-new.kubeconfig", "https://127.0.0.1:11", "m")
	_, errOut, err := runCLI(t, url, "join", "c1", "--cluster-kubeconfig", moved)
	if err != nil || !strings.Contains(errOut, "c1 is joined already: its labels, taints, region are kept") {
		t.Fatalf("join c1 again: %v\n%s", err, errOut)
	}
	got := func() events.ClusterRegistration {
		members, err := readClusters(context.Background(), bus)
		if err != nil || len(members) != 1 {
			t.Fatalf("clusters: %v %v", members, err)
		}
		return members[0].Registration
	}
	eventstest.Eventually(t, "c1 joined again on its new server, its labels, region and taint kept", func() bool {
		r := got()
		return r.Labels["city"] == "beijing" && r.Spec.Region == "cn-north" && len(r.Spec.Taints) == 1 && r.Spec.APIEndpoint == "https://127.0.0.1:11"
	})
	if out, errOut, err := runCLI(t, url, "join", "c1", "--cluster-kubeconfig", moved, "--labels", "city=shanghai", "--region", "cn-east"); err != nil {
		t.Fatalf("join c1 with flags: %v\n%s%s", err, out, errOut)
	}
	// The registration follows the accepted Cluster, which join waits for.
	eventstest.Eventually(t, "c1 joined again with --labels city=shanghai and --region cn-east, its taint kept", func() bool {
		r := got()
		return r.Labels["city"] == "shanghai" && r.Spec.Region == "cn-east" && len(r.Spec.Taints) == 1
	})
}

// TestApplyingAJoinedClusterWithoutItsSecretRefIsRefused: apply replaces
// the whole Cluster, so a file with only the label to add took the
// member's credentials away (NotReady, and evicted 5 minutes later). It
// is refused, saying where the credentials are, and nothing is published.
func TestApplyingAJoinedClusterWithoutItsSecretRefIsRefused(t *testing.T) {
	url, bus := joinBus(t)
	if out, errOut, err := runCLI(t, url, "join", "c1", "--cluster-kubeconfig", writeKubeconfig(t, "c1.kubeconfig", "https://127.0.0.1:1", "m")); err != nil {
		t.Fatalf("join c1: %v\n%s%s", err, out, errOut)
	}
	before := inputMessages(t, bus)
	partial := writeFile(t, "c1.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: c1, labels: {tier: gold}}\nspec: {apiEndpoint: https://127.0.0.1:1}\n")
	_, errOut, err := runCLI(t, url, "apply", "-f", partial)
	if err == nil || !strings.Contains(errOut, partial+": document 1: line 1: spec.secretRef: required: cluster c1 is joined with the credentials in secret karmada-system/c1-kubeconfig") {
		t.Errorf("apply of c1 without its secretRef: %v\n%s", err, errOut)
	}
	if n := inputMessages(t, bus); n != before {
		t.Errorf("%d request(s) published, want none", n-before)
	}
	if out, _, err := runCLI(t, url, "get", "cluster", "c1", "-o", "yaml"); err != nil || !strings.Contains(out, "name: c1-kubeconfig") {
		t.Errorf("get cluster c1 -o yaml does not show the secretRef the error points to: %v\n%s", err, out)
	}
	whole := writeFile(t, "c1-whole.yaml", "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: c1, labels: {tier: gold}}\n"+
		"spec: {apiEndpoint: https://127.0.0.1:1, secretRef: {namespace: karmada-system, name: c1-kubeconfig}}\n")
	if out, errOut, err := runCLI(t, url, "apply", "-f", whole); err != nil {
		t.Errorf("apply of c1 with its secretRef: %v\n%s%s", err, out, errOut)
	}
}

// TestAReJoinKeepsWhatWasAcceptedBeforeTheRegistrationFollowed: the
// registration follows the accepted Cluster object; a re-join read it, so a
// label applied a moment before was not there yet and the re-join dropped
// it. It now reads the accepted object.
func TestAReJoinKeepsWhatWasAcceptedBeforeTheRegistrationFollowed(t *testing.T) {
	_, bus := joinBus(t)
	reg := events.ClusterRegistration{Name: "c1", Generation: 1, Labels: map[string]string{"city": "beijing"}}
	obj := []byte(`{"apiVersion":"cluster.karmada.io/v1alpha1","kind":"Cluster","metadata":{"name":"c1","labels":{"city":"beijing","tier":"gold"}},` +
		`"spec":{"apiEndpoint":"https://127.0.0.1:1","taints":[{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]}}`)
	key := readmodel.ClusterKey("c1")
	publish(t, bus, events.ObjectSubject(key), events.TypeObjectAccepted, events.ObjectRecord{Key: key, APIVersion: "cluster.karmada.io/v1alpha1", Object: obj, Role: events.RoleCluster, Generation: 2})
	got := acceptedCluster(context.Background(), bus, reg)
	if got.Labels["tier"] != "gold" || len(got.Spec.Taints) != 1 {
		t.Errorf("re-join reads %+v, want the accepted object's label tier=gold and its taint", got)
	}
	if other := acceptedCluster(context.Background(), bus, events.ClusterRegistration{Name: "c2", Labels: map[string]string{"x": "y"}}); other.Labels["x"] != "y" {
		t.Errorf("a cluster with no accepted object: %+v, want its registration", other)
	}
}
