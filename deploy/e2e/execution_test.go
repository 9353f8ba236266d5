package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (s *system) applyYAML(name, doc string) {
	s.t.Helper()
	p := filepath.Join(s.dir, name)
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.mustCLI("apply", "-f", p)
}

func uniqueNS(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9) }

// TestPropagateDepsCarriesConfigMapAndSecretAlong: a Deployment whose policy
// says propagateDeps takes the ConfigMap and Secret it references to the same
// clusters, and only there; deleting the Deployment takes them away again.
func TestPropagateDepsCarriesConfigMapAndSecretAlong(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.joinAll()
	ns := uniqueNS("deps")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	s.applyYAML("deps.yaml", fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: app-config, namespace: %[1]s}
data: {mode: production}
---
apiVersion: v1
kind: Secret
metadata: {name: app-secret, namespace: %[1]s}
stringData: {password: s3cret}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25.3
        envFrom: [{configMapRef: {name: app-config}}]
      volumes: [{name: s, secret: {secretName: app-secret}}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [cluster1, cluster2]}}
`, ns))
	ctx := context.Background()
	for _, m := range []string{"cluster1", "cluster2"} {
		cs := s.member(m)
		eventually(t, 60*time.Second, "web, app-config and app-secret in "+m, func() error {
			if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
				return err
			}
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cm.Data["mode"] != "production" {
				return fmt.Errorf("configmap data %v", cm.Data)
			}
			sec, err := cs.CoreV1().Secrets(ns).Get(ctx, "app-secret", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if string(sec.Data["password"]) != "s3cret" {
				return fmt.Errorf("secret data %v", sec.Data)
			}
			return nil
		})
	}
	if _, err := s.member("cluster3").CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("app-config reached cluster3, which the workload does not run in: %v", err)
	}
	s.mustCLI("delete", "deployment/web", "-n", ns)
	for _, m := range []string{"cluster1", "cluster2"} {
		cs := s.member(m)
		eventually(t, 60*time.Second, "dependencies removed from "+m, func() error {
			_, e1 := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
			_, e2 := cs.CoreV1().Secrets(ns).Get(ctx, "app-secret", metav1.GetOptions{})
			if apierrors.IsNotFound(e1) && apierrors.IsNotFound(e2) {
				return nil
			}
			return fmt.Errorf("configmap: %v, secret: %v", e1, e2)
		})
	}
}

// TestConflictResolutionAbortRefusesAndOverwriteTakesOver: an object that
// exists in a member and was not created by Flotilla is left alone under the
// default Abort (with the reason in get work) and taken over with Overwrite.
func TestConflictResolutionAbortRefusesAndOverwriteTakesOver(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.joinAll()
	ns := uniqueNS("conflict")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	ctx := context.Background()
	cs := s.member("cluster1")
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}, Data: map[string]string{"owner": "someone-else"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	policy := func(resolution string) string {
		return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: legacy, namespace: %[1]s}
data: {owner: flotilla}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: legacy, namespace: %[1]s}
spec:
  conflictResolution: %[2]s
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: legacy}]
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
`, ns, resolution)
	}
	s.applyYAML("abort.yaml", policy("Abort"))
	eventually(t, 60*time.Second, "get work to report the conflict", func() error {
		out := s.mustCLI("get", "work", "-n", ns, "-o", "wide")
		if !strings.Contains(out, "Failed") || !strings.Contains(out, "conflictResolution is Abort") {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
	if cm, _ := cs.CoreV1().ConfigMaps(ns).Get(ctx, "legacy", metav1.GetOptions{}); cm.Data["owner"] != "someone-else" {
		t.Fatalf("Abort overwrote the object: %v", cm.Data)
	}
	s.applyYAML("overwrite.yaml", policy("Overwrite"))
	eventually(t, 60*time.Second, "Overwrite to take the object over", func() error {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "legacy", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Data["owner"] != "flotilla" {
			return fmt.Errorf("data %v", cm.Data)
		}
		return nil
	})
}

// TestPermanentApplyErrorSurfacesWhileOtherClustersKeepWorking: an override
// that makes the object invalid in one cluster fails there with the API
// server's message; the other clusters run it.
func TestPermanentApplyErrorSurfacesWhileOtherClustersKeepWorking(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.joinAll()
	ns := uniqueNS("permerr")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	s.applyYAML("perm.yaml", fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: nginx:1.25.3}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: api, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: api}]
  placement: {clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: break-cluster2, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: api}]
  overrideRules:
  - targetCluster: {clusterNames: [cluster2]}
    overriders:
      plaintext:
      - {path: /spec/replicas, operator: replace, value: -3}
`, ns))
	eventually(t, 60*time.Second, "cluster2 Failed with the API server's message, the others Running", func() error {
		out := s.mustCLI("get", "work", "-n", ns, "-o", "wide")
		lines := strings.Split(out, "\n")
		var c1, c2, c3 string
		for _, l := range lines {
			switch {
			case strings.Contains(l, " cluster1 "):
				c1 = l
			case strings.Contains(l, " cluster2 "):
				c2 = l
			case strings.Contains(l, " cluster3 "):
				c3 = l
			}
		}
		if !strings.Contains(c2, "Failed") || !strings.Contains(c2, "spec.replicas") || !strings.Contains(c1, "Running") || !strings.Contains(c3, "Running") {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
}
