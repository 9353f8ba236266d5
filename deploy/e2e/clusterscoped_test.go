package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgetGVR = schema.GroupVersionResource{Group: "example.flotilla.io", Version: "v1", Resource: "widgets"}
)

const widgetCRD = "widgets.example.flotilla.io"

// widgetCRDYAML is the CustomResourceDefinition of Widgets, as applied.
const widgetCRDYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + widgetCRD + `}
spec:
  group: example.flotilla.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`

// gizmoYAML is Widget gizmo in namespace ns with the PropagationPolicy
// that places every Widget there on cluster.
func gizmoYAML(ns, cluster string) string {
	return fmt.Sprintf(`apiVersion: example.flotilla.io/v1
kind: Widget
metadata: {name: gizmo, namespace: %[1]s}
spec: {size: 3}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: widgets, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: example.flotilla.io/v1, kind: Widget}]
  placement: {clusterAffinity: {clusterNames: [%[2]s]}}
`, ns, cluster)
}

// dynamicFor returns a dynamic client for a sandbox member.
func (s *system) dynamicFor(name string) dynamic.Interface {
	s.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.sandbox, name+".kubeconfig"))
	if err != nil {
		s.t.Fatal(err)
	}
	return dynamic.NewForConfigOrDie(cfg)
}

// removeClusterScoped deletes the test's cluster-scoped objects from every
// member and waits until the CRD is gone (its name is fixed).
func (s *system) removeClusterScoped(clusterRole string) {
	ctx := context.Background()
	for _, m := range members {
		_ = s.member(m).RbacV1().ClusterRoles().Delete(ctx, clusterRole, metav1.DeleteOptions{})
		_ = s.dynamicFor(m).Resource(crdGVR).Delete(ctx, widgetCRD, metav1.DeleteOptions{})
	}
	for _, m := range members {
		dyn := s.dynamicFor(m)
		eventually(s.t, 30*time.Second, "CRD "+widgetCRD+" gone from "+m, func() error {
			if _, err := dyn.Resource(crdGVR).Get(ctx, widgetCRD, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there: %v", err)
			}
			return nil
		})
	}
}

// TestClusterScopedTemplatesAndCRDsArePropagated: a ClusterPropagationPolicy
// places a ClusterRole and a CustomResourceDefinition on cluster1; a Widget of
// that CRD, applied in the same file with its PropagationPolicy, follows once
// the CRD is established there; deleting the CRD deletes the Widget.
func TestClusterScopedTemplatesAndCRDsArePropagated(t *testing.T) {
	s := newSystem(t)
	ns := uniqueNS("clusterscoped")
	role := "flotilla-e2e-" + ns
	s.removeClusterScoped(role) // left by an earlier run
	s.startAll()
	s.joinAll()
	t.Cleanup(func() { s.halt(); s.removeClusterScoped(role); s.deleteNamespace(ns) })
	s.applyYAML("clusterscoped.yaml", fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[2]s}
rules:
- apiGroups: [example.flotilla.io]
  resources: [widgets]
  verbs: [get, list, watch]
---
`+widgetCRDYAML+`---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: widgets-platform}
spec:
  resourceSelectors:
  - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: %[2]s}
  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: %[3]s}
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
---
`, ns, role, widgetCRD)+gizmoYAML(ns, "cluster1"))

	ctx := context.Background()
	cs, dyn := s.member("cluster1"), s.dynamicFor("cluster1")
	eventually(t, 30*time.Second, "ClusterRole in cluster1", func() error {
		r, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(r.Rules) != 1 || r.Rules[0].Resources[0] != "widgets" {
			return fmt.Errorf("rules %+v", r.Rules)
		}
		return nil
	})
	s.waitEstablished("cluster1", widgetCRD)
	start := time.Now()
	eventually(t, 45*time.Second, "Widget gizmo in cluster1", func() error {
		w, err := dyn.Resource(widgetGVR).Namespace(ns).Get(ctx, "gizmo", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size"); size != 3 {
			return fmt.Errorf("spec.size %d", size)
		}
		if w.GetLabels()["flotilla.io/managed"] != "true" {
			return fmt.Errorf("labels %v", w.GetLabels())
		}
		return nil
	})
	t.Logf("Widget present %s after the CRD was established", time.Since(start).Round(100*time.Millisecond))
	if os.Getenv("FLOTILLA_E2E_DEBUG") != "" {
		b, _ := os.ReadFile(filepath.Join(s.dir, "executord.log"))
		t.Logf("executord:\n%s", b)
		b, _ = os.ReadFile(filepath.Join(s.dir, "schedulerd.log"))
		t.Logf("schedulerd:\n%s", b)
		t.Logf("%s", s.mustCLI("explain", "widget/gizmo", "-n", ns))
	}
	for _, m := range []string{"cluster2", "cluster3"} {
		if _, err := s.member(m).RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("ClusterRole reached %s: %v", m, err)
		}
		if _, err := s.dynamicFor(m).Resource(crdGVR).Get(ctx, widgetCRD, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("CRD reached %s: %v", m, err)
		}
	}
	eventually(t, 30*time.Second, "get work: the Widget Running in cluster1", func() error {
		out := s.mustCLI("get", "work", "-n", ns, "-o", "wide")
		if r := workRow(out, "gizmo", "cluster1"); !strings.Contains(r, "Running") && !strings.Contains(r, "Applied") {
			return fmt.Errorf("%s", out)
		}
		return nil
	})

	// Deleting the CRD deletes its Widgets, as the API server does: gizmo
	// is no template any more and has no work left (it stayed a template
	// that Failed in cluster1 once the CRD had left it).
	s.mustCLI("delete", "crd", widgetCRD)
	eventually(t, 45*time.Second, "the CRD, and gizmo with it, gone from Flotilla and cluster1", func() error {
		if _, err := s.dynamicFor("cluster1").Resource(crdGVR).Get(ctx, widgetCRD, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the CRD in cluster1: %v", err)
		}
		if out, _, _ := s.cli("get", "widgets", "-n", ns); strings.Contains(out, "gizmo") {
			return fmt.Errorf("get widgets still lists gizmo:\n%s", out)
		}
		if out := s.mustCLI("get", "work", "-n", ns); strings.Contains(out, "gizmo") {
			return fmt.Errorf("get work still lists gizmo:\n%s", out)
		}
		return nil
	})
}
