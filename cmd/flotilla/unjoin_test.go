package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

// unjoin deletes the Secret a Cluster's spec.secretRef names only when it
// is there and no other Cluster uses it.
func TestUnjoinKeepsASecretAnotherClusterUsesAndDeletesNoneThatIsMissing(t *testing.T) {
	url, bus := joinBus(t)
	if out, errOut, err := runCLI(t, url, "join", "c1", "--cluster-kubeconfig", writeKubeconfig(t, "c1.kubeconfig", "https://127.0.0.1:1", "m")); err != nil {
		t.Fatalf("join c1: %v\n%s%s", err, out, errOut)
	}
	clusters := filepath.Join(t.TempDir(), "clusters.yaml")
	if err := os.WriteFile(clusters, []byte(`apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: c8}
spec:
  apiEndpoint: https://127.0.0.1:8
  secretRef: {namespace: karmada-system, name: c1-kubeconfig}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: c9}
spec:
  apiEndpoint: https://127.0.0.1:9
  secretRef: {namespace: karmada-system, name: ghost}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runCLI(t, url, "apply", "-f", clusters); err != nil {
		t.Fatalf("apply: %v\n%s%s", err, out, errOut)
	}
	for _, tt := range []struct {
		name, cluster, wantStdout, wantNote string
		wantSecret                          bool
	}{
		{"the Secret c1 still uses is kept", "c8",
			"secret/c1-kubeconfig kept: still used by cluster c1\ncluster.cluster.karmada.io/c8 deleted\n",
			"unjoin c8: no template has work there; the Cluster and its credentials are removed\n", true},
		{"a Secret that is not there is not deleted", "c9",
			"cluster.cluster.karmada.io/c9 deleted\n", "secret/ghost -n karmada-system not found: nothing to delete\n", true},
		{"the Secret of the last cluster using it is deleted", "c1",
			"cluster.cluster.karmada.io/c1 deleted\nsecret/c1-kubeconfig deleted\n", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runCLI(t, url, "unjoin", tt.cluster, "--yes", "--cascade=orphan")
			if err != nil {
				t.Fatalf("unjoin %s: %v\n%s%s", tt.cluster, err, out, errOut)
			}
			if diff := cmp.Diff(tt.wantStdout, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if !strings.Contains(errOut, tt.wantNote) {
				t.Errorf("stderr:\n%s\nwant it to have:\n%s", errOut, tt.wantNote)
			}
			p, err := readPublished(context.Background(), bus)
			if err != nil {
				t.Fatal(err)
			}
			_, has := p.Records[events.KeyOf("v1", "Secret", "karmada-system", "c1-kubeconfig")]
			if diff := cmp.Diff(tt.wantSecret, has); diff != "" {
				t.Errorf("secret/c1-kubeconfig accepted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeleteClusterNameDeletesTheClusterObject: `delete cluster NAME`
// deletes a Cluster object, as delete's help says and delete -f does; it
// said "cluster names no template or policy".
func TestDeleteClusterNameDeletesTheClusterObject(t *testing.T) {
	url, _ := joinBus(t)
	if out, errOut, err := runCLI(t, url, "join", "c1", "--cluster-kubeconfig", writeKubeconfig(t, "c1.kubeconfig", "https://127.0.0.1:1", "m")); err != nil {
		t.Fatalf("join c1: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err := runCLI(t, url, "delete", "cluster", "c1", "--timeout", "10s")
	if err != nil || !strings.Contains(out, "cluster.cluster.karmada.io/c1 deleted") {
		t.Fatalf("delete cluster c1: %v\n%s%s", err, out, errOut)
	}
	if _, errOut, err := runCLI(t, url, "delete", "cluster", "c9"); err == nil || err.Error() != `cluster "c9" not found` {
		t.Errorf("delete cluster c9 (no such cluster): %v\n%s", err, errOut)
	}
}

// TestUnjoinRefusesToRemoveWorkloadsFromAnUnreachableCluster: removing
// the workloads of a member that does not answer cannot succeed; unjoin
// waited out --drain and then blamed the last-copy rule. It now says at
// once that the cluster is Unreachable, and how to unjoin it
// (--cascade=orphan), and changes nothing.
func TestUnjoinRefusesToRemoveWorkloadsFromAnUnreachableCluster(t *testing.T) {
	url, bus := joinBus(t)
	if out, errOut, err := runCLI(t, url, "join", "c1", "--cluster-kubeconfig", writeKubeconfig(t, "c1.kubeconfig", "https://127.0.0.1:1", "m")); err != nil {
		t.Fatalf("join c1: %v\n%s%s", err, out, errOut)
	}
	since := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	publish(t, bus, events.HealthSubject("c1"), events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "c1", State: events.ClusterStateUnreachable,
		Reason: "ClusterUnreachable", Since: since, ObservedAt: since})
	web := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}
	publish(t, bus, events.WorkSubject("c1", web), events.TypeWorkStatusChanged, events.WorkStatus{Key: web, Cluster: "c1", Generation: 1, Phase: events.WorkRunning})
	_, _, err := runCLI(t, url, "unjoin", "c1", "--yes", "--drain", "5s")
	if err == nil || !strings.Contains(err.Error(), "cluster c1 is Unreachable since 2026-12-01T10:00:00Z (ClusterUnreachable)") ||
		!strings.Contains(err.Error(), "unjoin c1 --cascade=orphan") {
		t.Fatalf("unjoin of an Unreachable cluster with work: %v, want it refused at once, naming the state and --cascade=orphan", err)
	}
	p, err := readPublished(context.Background(), bus)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Records[events.KeyOf("cluster.karmada.io/v1alpha1", "Cluster", "", "c1")]; !ok {
		t.Error("the Cluster c1 was deleted although unjoin refused")
	}
}
