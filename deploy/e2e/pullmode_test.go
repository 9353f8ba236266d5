package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// expectImage waits until deployment name in ns has the image in each of clusters.
func (s *system) expectImage(ns, name, image string, clusters ...string) {
	s.t.Helper()
	ctx := context.Background()
	for _, m := range clusters {
		cs := s.member(m)
		eventually(s.t, 60*time.Second, fmt.Sprintf("%s with %s in %s", name, image, m), func() error {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
				return fmt.Errorf("image %s", got)
			}
			return nil
		})
	}
}

// TestPullModeOneExecutordPerClusterWithOnlyItsKubeconfig: three members
// joined with --sync-mode Pull, served by three pull-mode executords
// (`executord --cluster NAME --kubeconfig FILE`), each knowing only its own
// member, in place of the push-mode one. A Duplicated Deployment lands in
// all three; with cluster2's executord down a template change reaches
// clusters 1 and 3 only, and cluster2 catches up when its executord returns.
func TestPullModeOneExecutordPerClusterWithOnlyItsKubeconfig(t *testing.T) {
	s := newSystem(t)
	for _, d := range []string{"policyd", "schedulerd", "healthd"} {
		s.start(d)
	}
	// A pull-mode cluster is one registered as Pull: only those have
	// assignments written, and up's executord would leave them.
	for _, m := range members {
		s.mustCLI("join", m, "--cluster-kubeconfig", filepath.Join(s.sandbox, m+".kubeconfig"), "--sync-mode", "Pull")
	}
	s.waitReady(len(members))
	if out := s.mustCLI("get", "clusters"); strings.Count(out, "Pull") != len(members) {
		t.Fatalf("want every member in Pull mode:\n%s", out)
	}
	pull := func(m string) {
		// system.start adds --credentials-key for executord; pull mode ignores it
		// (executord.Config.Validate requires it only in push mode).
		s.start("executord-"+m, "--cluster", m, "--kubeconfig", filepath.Join(s.sandbox, m+".kubeconfig"))
	}
	for _, m := range members {
		pull(m)
	}
	ns := uniqueNS("pull")
	t.Cleanup(func() { s.halt(); s.deleteNamespace(ns) })
	doc := func(image string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: %[2]s}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, ns, image)
	}
	s.applyYAML("v1.yaml", doc("nginx:1.25.3"))
	s.expectImage(ns, "web", "nginx:1.25.3", members...)
	// Each pull-mode executord applied to its own cluster only.
	for _, m := range members {
		b, _ := os.ReadFile(filepath.Join(s.dir, "executord-"+m+".log"))
		for _, l := range applyingLine.FindAllStringSubmatch(string(b), -1) {
			if l[1] != m {
				t.Errorf("executord-%s applied to %s", m, l[1])
			}
		}
		if !strings.Contains(string(b), "executord ready (pull mode)") {
			t.Errorf("executord-%s did not start in pull mode:\n%s", m, tail(string(b), 2000))
		}
	}

	s.kill("executord-cluster2")
	s.applyYAML("v2.yaml", doc("nginx:1.27.0"))
	s.expectImage(ns, "web", "nginx:1.27.0", "cluster1", "cluster3")
	time.Sleep(3 * time.Second) // more than a resync period of the others
	d, err := s.member("cluster2").AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "nginx:1.25.3" {
		t.Fatalf("cluster2 has %s while its executord is down", got)
	}
	eventually(t, 30*time.Second, "get work: cluster2 still at generation 1, the others at 2", func() error {
		out := s.mustCLI("get", "work", "-n", ns, "-o", "wide")
		for m, gen := range map[string]string{"cluster1": "2", "cluster2": "1", "cluster3": "2"} {
			f := strings.Fields(workRow(out, "web", m))
			if len(f) < 8 || f[7] != gen { // NAME CLUSTER STATUS AGE KIND READY HEALTH GENERATION
				return fmt.Errorf("%s: want generation %s:\n%s", m, gen, out)
			}
		}
		return nil
	})

	pull("cluster2")
	s.expectImage(ns, "web", "nginx:1.27.0", "cluster2")
	eventually(t, 30*time.Second, "get work: generation 2 everywhere", func() error {
		out := s.mustCLI("get", "work", "-n", ns, "-o", "wide")
		for _, m := range members {
			f := strings.Fields(workRow(out, "web", m))
			if len(f) < 8 || f[7] != "2" || f[2] != "Running" {
				return fmt.Errorf("%s:\n%s", m, out)
			}
		}
		return nil
	})
}
