package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const seed000 = "../../examples/seed000"

// TestSeed000PlacesMyAppThreeTwoOneWithPerClusterRegistries is seed 000 end to
// end: three members, my-app Deployment + Service, weights 3:2:1, a registry
// per cluster; scaling follows; deleting the template empties the members.
func TestSeed000PlacesMyAppThreeTwoOneWithPerClusterRegistries(t *testing.T) {
	s := newSystem(t)
	s.cleanMembers("default", []string{"my-app"}, []string{"my-app"})
	s.startAll()
	s.joinAll()
	s.mustCLI("apply", "-f", filepath.Join(seed000, "my-app.yaml"), "-f", filepath.Join(seed000, "propagation-policy.yaml"), "-f", filepath.Join(seed000, "override-policy.yaml"))

	wantImage := map[string]string{"cluster1": "registry.beijing.example.com/nginx:1.25.3", "cluster2": "registry.shanghai.example.com/nginx:1.25.3", "cluster3": "nginx:1.25.3"}
	s.expectReplicas(map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}, wantImage)
	ctx := context.Background()
	for _, m := range members {
		if _, err := s.member(m).CoreV1().Services("default").Get(ctx, "my-app", metav1.GetOptions{}); err != nil {
			t.Errorf("service my-app in %s: %v", m, err)
		}
	}
	eventually(t, 60*time.Second, "get work shows Running in all three", func() error {
		out := s.mustCLI("get", "work")
		if n := strings.Count(out, "Running"); n < 3 {
			return fmt.Errorf("%d Running rows:\n%s", n, out)
		}
		return nil
	})

	// work is the type: my-app names the work of the Deployment and of the
	// Service; without a type the name is ambiguous.
	if out, errOut, code := s.cli("describe", "work", "my-app"); code != 0 || !strings.Contains(out, "Kind:         Deployment") || !strings.Contains(out, "Kind:         Service") {
		t.Errorf("describe work my-app: want the work of both templates, got exit %d: %s%s", code, out, errOut)
	}
	if _, errOut, code := s.cli("explain", "my-app"); code == 0 || !strings.Contains(errOut, "deployment/my-app or service/my-app") {
		t.Errorf("explain my-app names a Deployment and a Service; want an error asking which, got exit %d: %s", code, errOut)
	}
	// Ready counts follow the members' pods: eventually 6 of 6, 3 of 3 in
	// cluster1 (a first placement made before every member was Ready may
	// still be scaling down).
	eventually(t, 60*time.Second, "get deployment/my-app to show 6 of 6 ready", func() error {
		view := s.mustCLI("get", "deployment/my-app", "-n", "default")
		if !regexp.MustCompile(`TOTAL\s+6\s+6`).MatchString(view) || !regexp.MustCompile(`cluster1\s+3\s+3\s+Running`).MatchString(view) {
			return fmt.Errorf("get deployment/my-app:\n%s", view)
		}
		return nil
	})
	if out := s.mustCLI("describe", "work", "deployment/my-app", "-n", "default"); !regexp.MustCompile(`(?m)^\s+cluster2\s+`).MatchString(out) || !strings.Contains(out, "OverridePolicy/default/my-app-override") {
		t.Errorf("describe work:\n%s", out)
	}

	// Drift: scaling cluster2's copy by hand is put back on the next resync, and reported.
	d2, err := s.member("cluster2").AppsV1().Deployments("default").Get(ctx, "my-app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	five := int32(5)
	d2.Spec.Replicas = &five
	if _, err := s.member("cluster2").AppsV1().Deployments("default").Update(ctx, d2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.expectReplicas(map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}, wantImage)
	eventually(t, 30*time.Second, "the drift reported in get work", func() error {
		if out := s.mustCLI("get", "work", "-o", "wide"); !strings.Contains(out, "drift repaired: spec.replicas") {
			return fmt.Errorf("%s", out)
		}
		return nil
	})

	explained := s.mustCLI("explain", "deployment/my-app", "-n", "default")
	for _, want := range []string{"Policy:      propagationpolicy/my-app-policy -n default", "cluster1=3 cluster2=2 cluster3=1", "Webster", "feasible"} {
		if !strings.Contains(explained, want) {
			t.Errorf("explain lacks %q:\n%s", want, explained)
		}
	}

	// A workload no cluster fits says why, one line per cluster.
	nowhere := filepath.Join(s.dir, "nowhere.yaml")
	_ = os.WriteFile(nowhere, []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: nowhere, namespace: default}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nowhere, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: nowhere}]
  placement: {clusterAffinity: {clusterNames: [mars]}}
`), 0o644)
	s.mustCLI("apply", "-f", nowhere)
	eventually(t, 30*time.Second, "an unschedulable placement for configmap/nowhere", func() error {
		out, _, code := s.cli("explain", "configmap/nowhere")
		if code != 0 {
			return fmt.Errorf("explain exit %d", code)
		}
		for _, m := range members {
			if !strings.Contains(out, m+"  ") || !strings.Contains(out, "ClusterAffinity: ") || !strings.Contains(out, "Scheduled:   no") {
				return fmt.Errorf("explain:\n%s", out)
			}
		}
		return nil
	})
	s.mustCLI("delete", "configmap/nowhere", "-n", "default")
	s.mustCLI("delete", "pp/nowhere")
	if out := s.mustCLI("get", "policies"); strings.Contains(out, "nowhere") {
		t.Errorf("policy still listed after delete pp/nowhere:\n%s", out)
	}

	// Every daemon reports ready (NATS connected, consumers pulling) and exposes its metrics.
	for _, d := range []string{"policyd", "schedulerd", "healthd", "executord"} {
		base := s.endpoint(d)
		if code, body := httpGet(t, base+"/readyz"); code != 200 {
			t.Errorf("%s /readyz = %d %s", d, code, body)
		}
		if _, body := httpGet(t, base+"/metrics"); !strings.Contains(body, "flotilla_events_published_total") && !strings.Contains(body, "flotilla_events_handled_total") {
			t.Errorf("%s /metrics lacks the flotilla_ event counters", d)
		}
	}
	if _, body := httpGet(t, s.endpoint("executord")+"/metrics"); !strings.Contains(body, `flotilla_executor_applies_total{cluster="cluster1"}`) {
		t.Errorf("executord /metrics lacks the apply counter")
	}
	if _, body := httpGet(t, s.endpoint("healthd")+"/metrics"); !strings.Contains(body, `flotilla_cluster_ready{cluster="cluster1"} 1`) {
		t.Errorf("healthd /metrics lacks per-cluster health")
	}

	// Scale the template to 12: the members follow 6/4/2.
	raw, err := os.ReadFile(filepath.Join(seed000, "my-app.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	scaled := filepath.Join(s.dir, "my-app-12.yaml")
	if err := os.WriteFile(scaled, []byte(strings.Replace(string(raw), "replicas: 6", "replicas: 12", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.mustCLI("apply", "-f", scaled)
	s.expectReplicas(map[string]int32{"cluster1": 6, "cluster2": 4, "cluster3": 2}, wantImage)

	// Delete the template: it is gone from all three.
	s.mustCLI("delete", "-f", scaled)
	for _, m := range members {
		cs := s.member(m)
		eventually(t, 60*time.Second, "my-app deleted from "+m, func() error {
			_, errD := cs.AppsV1().Deployments("default").Get(ctx, "my-app", metav1.GetOptions{})
			_, errS := cs.CoreV1().Services("default").Get(ctx, "my-app", metav1.GetOptions{})
			if apierrors.IsNotFound(errD) && apierrors.IsNotFound(errS) {
				return nil
			}
			return fmt.Errorf("deployment: %v, service: %v", errD, errS)
		})
	}
}

// expectReplicas waits until each member's my-app Deployment has the
// replicas and image wanted and its pods are ready (kwok nodes, kube-scheduler).
func (s *system) expectReplicas(want map[string]int32, image map[string]string) {
	s.t.Helper()
	ctx := context.Background()
	for _, m := range members {
		cs := s.member(m)
		eventually(s.t, 90*time.Second, fmt.Sprintf("my-app with %d ready replicas in %s", want[m], m), func() error {
			d, err := cs.AppsV1().Deployments("default").Get(ctx, "my-app", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != want[m] {
				return fmt.Errorf("spec.replicas = %v", d.Spec.Replicas)
			}
			if got := d.Spec.Template.Spec.Containers[0].Image; got != image[m] {
				return fmt.Errorf("image = %s, want %s", got, image[m])
			}
			if d.Status.ReadyReplicas != want[m] {
				return fmt.Errorf("ready %d of %d", d.Status.ReadyReplicas, want[m])
			}
			return nil
		})
	}
}
