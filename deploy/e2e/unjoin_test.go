package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUnjoinOrphanLeavesTheWorkloadInTheMemberAndPlacesItElsewhere:
// `unjoin cluster3 --cascade=orphan` removes the cluster and leaves its
// copy of a Duplicated workload running there, as Karmada leaves what a
// deleted Cluster held; the other members keep theirs, get work no longer
// lists cluster3, and joined again cluster3 keeps the same copy (its UID
// unchanged: nothing deleted it on the way).
func TestUnjoinOrphanLeavesTheWorkloadInTheMemberAndPlacesItElsewhere(t *testing.T) {
	s := newSystem(t)
	ns := uniqueNS("orphan")
	t.Cleanup(func() { s.halt(); s.deleteNamespace(ns) })
	s.startAll()
	s.joinAll()
	s.applyYAML("orphan.yaml", fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: kept, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: kept}}
  template:
    metadata: {labels: {app: kept}}
    spec: {containers: [{name: c, image: nginx:1.25.3, resources: {requests: {cpu: 10m}}}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: kept, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: kept}]
  placement: {replicaScheduling: {replicaSchedulingType: Duplicated}}
`, ns))
	expectMembers(s, "kept in every member", ns, "kept", map[string]int32{"cluster1": 1, "cluster2": 1, "cluster3": 1})
	uid := func() string {
		d, err := s.member("cluster3").AppsV1().Deployments(ns).Get(context.Background(), "kept", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("kept in cluster3: %v", err)
		}
		return string(d.UID)
	}
	first := uid()

	s.mustCLI("unjoin", "cluster3", "--cascade=orphan", "--yes")
	eventually(t, 30*time.Second, "get work without cluster3", func() error {
		if out := s.mustCLI("get", "work", "-n", ns); strings.Contains(out, "cluster3") || !strings.Contains(out, "cluster1") {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
	time.Sleep(3 * time.Second) // a deletion sent by mistake would have reached the member by now
	expectMembers(s, "kept left running in cluster3, and in the others", ns, "kept", map[string]int32{"cluster1": 1, "cluster2": 1, "cluster3": 1})
	if now := uid(); now != first {
		t.Fatalf("kept in cluster3 was deleted and created again by the unjoin (UID %s, then %s)", first, now)
	}

	s.joinAll()
	time.Sleep(3 * time.Second) // the new worker has read the placements
	expectMembers(s, "kept still in cluster3 after it joined again", ns, "kept", map[string]int32{"cluster1": 1, "cluster2": 1, "cluster3": 1})
	if now := uid(); now != first {
		t.Errorf("kept in cluster3 was deleted and created again when it joined again (UID %s, then %s)", first, now)
	}
}

// TestUnjoinKeepsTheCRDWhileACustomResourceOfItsKindIsKept: unjoin taints
// cluster3, and failover purged the CRD there at once (it has no health
// rule) while the only copy of a Widget, which fits nowhere else, was kept:
// the member then deleted the Widget with its CRD, and get work still said
// "copy kept". The CRD's removal now waits (Deleting, naming the Widget)
// and is carried out once the Widget's template is deleted.
func TestUnjoinKeepsTheCRDWhileACustomResourceOfItsKindIsKept(t *testing.T) {
	s := newSystem(t)
	ns := uniqueNS("crdorder")
	s.removeClusterScoped("")
	s.startAll()
	s.joinAll()
	t.Cleanup(func() { s.halt(); s.removeClusterScoped(""); s.deleteNamespace(ns) })
	s.applyYAML("crdorder.yaml", widgetCRDYAML+`---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: widgets-everywhere}
spec:
  resourceSelectors: [{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: `+widgetCRD+`}]
---
`+gizmoYAML(ns, "cluster3"))
	ctx := context.Background()
	for _, m := range members {
		s.waitEstablished(m, widgetCRD)
	}
	dyn := s.dynamicFor("cluster3")
	var uid string
	eventually(t, 45*time.Second, "Widget gizmo in cluster3", func() error {
		w, err := dyn.Resource(widgetGVR).Namespace(ns).Get(ctx, "gizmo", metav1.GetOptions{})
		if err == nil {
			uid = string(w.GetUID())
		}
		return err
	})

	out, errOut, code := s.cli("unjoin", "cluster3", "--yes", "--drain", "20s")
	if code == 0 || !strings.Contains(out+errOut, "gizmo") {
		t.Fatalf("unjoin cluster3 drained though the Widget fits nowhere else (exit %d):\n%s%s", code, out, errOut)
	}
	w, err := dyn.Resource(widgetGVR).Namespace(ns).Get(ctx, "gizmo", metav1.GetOptions{})
	if err != nil || string(w.GetUID()) != uid {
		t.Fatalf("the kept Widget left cluster3 during the unjoin (the CRD removed first?): %v", err)
	}
	if _, err := dyn.Resource(crdGVR).Get(ctx, widgetCRD, metav1.GetOptions{}); err != nil {
		t.Fatalf("the CRD left cluster3 while a Widget of its kind is kept there: %v", err)
	}
	if out := s.mustCLI("get", "work", "-A", "-o", "json"); !strings.Contains(out, "removal waits until the 1 custom resource(s) of its kind here leave cluster3") {
		t.Errorf("get work does not say why the CRD is still in cluster3:\n%s", out)
	}

	s.mustCLI("delete", "widget", "gizmo", "-n", ns)
	eventually(t, 45*time.Second, "the Widget, then the CRD, gone from cluster3; the CRD still in cluster1", func() error {
		if _, err := dyn.Resource(widgetGVR).Namespace(ns).Get(ctx, "gizmo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("gizmo in cluster3: %v", err)
		}
		if _, err := dyn.Resource(crdGVR).Get(ctx, widgetCRD, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the CRD in cluster3: %v", err)
		}
		_, err := s.dynamicFor("cluster1").Resource(crdGVR).Get(ctx, widgetCRD, metav1.GetOptions{})
		return err
	})
}
