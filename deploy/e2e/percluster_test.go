package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// onlyCluster2 is a Deployment and its policy placed on cluster2 alone.
const onlyCluster2 = `apiVersion: apps/v1
kind: Deployment
metadata: {name: only-cluster2, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: only-cluster2}}
  template:
    metadata: {labels: {app: only-cluster2}}
    spec: {containers: [{name: web, image: nginx:1.25.3}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: only-cluster2, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: only-cluster2}]
  placement: {clusterAffinity: {clusterNames: [cluster2]}}
`

// TestAMemberExecutordOnItsClusterCredentialAppliesItsWorkAndReadsNoOtherClusters
// runs `flotilla up` with authentication on, turns cluster1 into a Pull
// cluster (up's executord then leaves it) and serves it with a pull-mode
// executord on a credential issued with --cluster cluster1: seed 000 places
// 3/2/1, cluster1's copy applied by that executord with cluster1's
// override, and every direct read of a placement that concerns only
// cluster2 is refused on that credential.
func TestAMemberExecutordOnItsClusterCredentialAppliesItsWorkAndReadsNoOtherClusters(t *testing.T) {
	s := newSystem(t)
	s.cleanMembers("default", []string{"my-app", "only-cluster2"}, []string{"my-app"})
	dataDir, listen := filepath.Join(s.dir, "up"), freeAddr(t)
	s.natsURL = "nats://" + listen
	s.startUp(dataDir, listen, 1)
	t.Cleanup(func() { s.halt(); s.cleanMembers("default", []string{"my-app", "only-cluster2"}, []string{"my-app"}) })
	s.joinAll()

	kubeconfig := filepath.Join(s.sandbox, "cluster1.kubeconfig")
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	s.mustCLI("apply", "-f", s.write("cluster1-pull.yaml", fmt.Sprintf(`apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: cluster1}
spec:
  apiEndpoint: %s
  syncMode: Pull
  secretRef: {namespace: karmada-system, name: cluster1-kubeconfig}
`, rc.Host)))
	creds := filepath.Join(s.dir, "cluster1.creds")
	s.mustCLI("creds", "issue", "executord", "member-cluster1", "--cluster", "cluster1", "-o", creds)
	s.start("executord-cluster1", "--creds", creds, "--cluster", "cluster1", "--kubeconfig", kubeconfig)

	s.mustCLI("apply", "-f", filepath.Join(seed000, "propagation-policy.yaml"), "-f", filepath.Join(seed000, "override-policy.yaml"),
		"-f", filepath.Join(seed000, "my-app.yaml"), "-f", s.write("only-cluster2.yaml", onlyCluster2))
	s.expectReplicas(map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1},
		map[string]string{"cluster1": "registry.beijing.example.com/nginx:1.25.3", "cluster2": "registry.shanghai.example.com/nginx:1.25.3", "cluster3": "nginx:1.25.3"})
	eventually(t, 30*time.Second, "only-cluster2 in cluster2", func() error {
		if out := s.mustCLI("get", "work", "-n", "default"); !strings.Contains(workRow(out, "only-cluster2", "cluster2"), "Running") {
			return fmt.Errorf("get work:\n%s", out)
		}
		return nil
	})
	b, _ := os.ReadFile(filepath.Join(s.dir, "executord-cluster1.log"))
	log := string(b)
	if !strings.Contains(log, "executord ready (pull mode)") || !strings.Contains(log, "my-app") {
		t.Errorf("the member's executord did not apply cluster1's work:\n%s", tail(log, 3000))
	}
	for _, l := range applyingLine.FindAllStringSubmatch(log, -1) {
		if l[1] != "cluster1" {
			t.Errorf("the member's executord applied to %s", l[1])
		}
	}
	if strings.Contains(log, "refused") {
		t.Errorf("the member's executord met a refusal:\n%s", tail(log, 3000))
	}
	up, _ := os.ReadFile(filepath.Join(s.dir, "up.log"))
	for _, l := range applyingLine.FindAllStringSubmatch(string(up), -1) {
		if l[1] == "cluster1" {
			t.Errorf("up's executord applied to cluster1, a Pull cluster")
			break
		}
	}

	key := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "only-cluster2"}
	for _, c := range []struct {
		name string
		read func(ctx context.Context, bus *natsbus.Bus)
	}{
		{"its placement, as the CLI reads it", func(ctx context.Context, bus *natsbus.Bus) {
			_, _ = bus.LatestPerSubject(ctx, events.StreamPlacement, events.PlacementSubject(key))
		}},
		{"its placement, directly", func(_ context.Context, bus *natsbus.Bus) {
			_, _ = bus.JetStream().Conn().Request("$JS.API.DIRECT.GET."+events.StreamPlacement+"."+events.PlacementSubject(key), nil, 2*time.Second)
		}},
		{"its placement, by sequence", func(ctx context.Context, bus *natsbus.Bus) { _, _ = bus.FetchMessage(ctx, events.StreamPlacement, 1) }},
		{"cluster2's assignment of it, directly", func(_ context.Context, bus *natsbus.Bus) {
			_, _ = bus.JetStream().Conn().Request("$JS.API.DIRECT.GET."+events.StreamWork+"."+events.AssignmentSubject("cluster2", key), nil, 2*time.Second)
		}},
		{"cluster2's assignments", func(ctx context.Context, bus *natsbus.Bus) {
			_, _ = bus.LatestPerSubject(ctx, events.StreamWork, events.AssignmentsOf("cluster2"))
		}},
		{"its template's binding", func(ctx context.Context, bus *natsbus.Bus) {
			_, _ = bus.LatestPerSubject(ctx, events.StreamPolicy, events.BindingSubject(key))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bus, err := natsbus.Connect(context.Background(), s.natsURL, natsbus.Options{Name: "member-cluster1", Credentials: creds, Reader: "executord-cluster1-read"})
			if err != nil {
				t.Fatal(err)
			}
			defer bus.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			go c.read(ctx, bus)
			select {
			case err := <-bus.Refused():
				var r *natsbus.Refusal
				if !errors.As(err, &r) || !strings.Contains(err.Error(), `credential "member-cluster1" (role executord)`) {
					t.Errorf("refusal: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("not refused within 5s")
			}
		})
	}
}
