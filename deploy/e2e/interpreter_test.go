package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

var (
	rayClusterGVR = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	acmeWorkerGVR = schema.GroupVersionResource{Group: "acme.dev", Version: "v1", Resource: "workers"}
)

// openCRD is a CustomResourceDefinition with open spec and status.
func openCRD(group, kind, plural string) *unstructured.Unstructured {
	var obj map[string]any
	doc := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[3]s.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: %[3]s, singular: %[4]s, kind: %[2]s, listKind: %[2]sList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, group, kind, plural, strings.ToLower(kind))
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// installCRDs puts the test's CRDs into every member (no operator runs
// there: the test plays the operator) and waits until they serve.
func (s *system) installCRDs(crds ...*unstructured.Unstructured) {
	ctx := context.Background()
	for _, m := range members {
		dyn := s.dynamicFor(m)
		for _, crd := range crds {
			if _, err := dyn.Resource(crdGVR).Create(ctx, crd.DeepCopy(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				s.t.Fatalf("CRD %s in %s: %v", crd.GetName(), m, err)
			}
		}
		for _, crd := range crds {
			s.waitEstablished(m, crd.GetName())
		}
	}
}

// waitEstablished waits until the CRD name serves in member m.
func (s *system) waitEstablished(m, name string) {
	dyn := s.dynamicFor(m)
	eventually(s.t, 30*time.Second, "CRD "+name+" established in "+m, func() error {
		got, err := dyn.Resource(crdGVR).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
				return nil
			}
		}
		return fmt.Errorf("not established: %v", conds)
	})
}

// removeCRDs deletes the test's CRDs (and so every object of them) from
// every member.
func (s *system) removeCRDs(names ...string) {
	for _, m := range members {
		for _, n := range names {
			_ = s.dynamicFor(m).Resource(crdGVR).Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	}
}

// holders lists the members that hold ns/name of gvr.
func (s *system) holders(gvr schema.GroupVersionResource, ns, name string) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, m := range members {
		if obj, err := s.dynamicFor(m).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
			out[m] = obj
		}
	}
	return out
}

// TestCustomResourcesWithInterpretersThroughTheDaemons (issue 22, reference
// features §3 and §7): the shipped RayCluster customization places a
// RayCluster whole into one member by a cluster 1/1 spread constraint; the
// test writes the member object's status as KubeRay would, and `get` and
// `describe work` show the status aggregated from it. A Divided custom
// resource gets each member's replicas written by its replicaRevision
// script.
func TestCustomResourcesWithInterpretersThroughTheDaemons(t *testing.T) {
	s := newSystem(t)
	ns := uniqueNS("interp")
	crds := []*unstructured.Unstructured{openCRD("ray.io", "RayCluster", "rayclusters"), openCRD("acme.dev", "Worker", "workers")}
	s.installCRDs(crds...)
	s.startAll()
	s.joinAll()
	t.Cleanup(func() { s.halt(); s.deleteNamespace(ns); s.removeCRDs(crds[0].GetName(), crds[1].GetName()) })

	ric, err := os.ReadFile("../../examples/ray-cluster/customization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.applyYAML("ray-customization.yaml", string(ric))
	s.applyYAML("ray.yaml", fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ray, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: ray.io/v1, kind: RayCluster}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
    spreadConstraints: [{spreadByField: cluster, minGroups: 1, maxGroups: 1}]
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: training, namespace: %[1]s}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: ray-head, image: rayproject/ray:2.41.0, resources: {requests: {cpu: "1", memory: 1Gi}}}]
  workerGroupSpecs:
  - groupName: workers
    replicas: 3
    template:
      spec:
        containers: [{name: ray-worker, image: rayproject/ray:2.41.0, resources: {requests: {cpu: "1", memory: 2Gi}}}]
`, ns))

	var cluster string
	eventually(t, 60*time.Second, "the RayCluster whole in exactly one member", func() error {
		got := s.holders(rayClusterGVR, ns, "training")
		if len(got) != 1 {
			return fmt.Errorf("held by %d members", len(got))
		}
		for m := range got {
			cluster = m
		}
		return nil
	})
	time.Sleep(2 * time.Second) // nothing reaches a second member later
	if got := s.holders(rayClusterGVR, ns, "training"); len(got) != 1 {
		t.Fatalf("the RayCluster is in %d members, want 1", len(got))
	}
	p, err := s.latestPlacement(ns, "training")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Clusters) != 1 || p.Clusters[0].Name != cluster || len(p.Clusters[0].Components) != 2 ||
		p.Clusters[0].Components[0].Name != "head" || p.Clusters[0].Components[1].Replicas != 3 {
		t.Fatalf("placement %+v, want %s with the components head=1 workers=3", p.Clusters, cluster)
	}
	explain := s.mustCLI("explain", "raycluster/training", "-n", ns)
	for _, want := range []string{"Interpreter: ResourceInterpreterCustomization ray-cluster", "Components:  head=1 (cpu 1, memory 1Gi), workers=3 (cpu 1, memory 2Gi)",
		cluster + "=0 (whole: head=1 workers=3)", "multi-component"} {
		if !strings.Contains(explain, want) {
			t.Errorf("explain lacks %q:\n%s", want, explain)
		}
	}

	// Play KubeRay: the member's RayCluster becomes ready.
	dyn := s.dynamicFor(cluster)
	eventually(t, 30*time.Second, "the member's status written", func() error {
		obj, err := dyn.Resource(rayClusterGVR).Namespace(ns).Get(context.Background(), "training", metav1.GetOptions{})
		if err != nil {
			return err
		}
		obj.Object["status"] = map[string]any{"state": "ready", "readyWorkerReplicas": int64(3), "availableWorkerReplicas": int64(3), "desiredWorkerReplicas": int64(3)}
		_, err = dyn.Resource(rayClusterGVR).Namespace(ns).UpdateStatus(context.Background(), obj, metav1.UpdateOptions{})
		return err
	})
	const aggregated = `"availableWorkerReplicas":3,"desiredWorkerReplicas":3,"readyWorkerReplicas":3,"state":"ready"`
	eventually(t, 30*time.Second, "get shows the aggregated status", func() error {
		out := s.mustCLI("get", "raycluster/training", "-n", ns)
		if !strings.Contains(out, aggregated) {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
	out := s.mustCLI("describe", "work", "training", "-n", ns)
	if !strings.Contains(out, aggregated) {
		t.Errorf("describe work lacks the aggregated status:\n%s", out)
	}
	eventually(t, 30*time.Second, "get work -o wide: Healthy by the health script", func() error {
		out := s.mustCLI("get", "work", "-n", ns, "-o", "wide")
		if r := workRow(out, "training", cluster); !strings.Contains(r, "Healthy") {
			return fmt.Errorf("%s", out)
		}
		return nil
	})

	// A Divided custom resource: 8 replicas at 3:1, each member's copy revised.
	s.applyYAML("worker.yaml", fmt.Sprintf(`apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: acme-worker}
spec:
  target: {apiVersion: acme.dev/v1, kind: Worker}
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(o) return o.spec.size or 0, {resourceRequest = {cpu = "100m"}} end
    replicaRevision:
      luaScript: |
        function ReviseReplica(o, n) o.spec.size = n; return o end
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: workers, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: acme.dev/v1, kind: Worker}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [cluster1]}, weight: 3}
        - {targetCluster: {clusterNames: [cluster2]}, weight: 1}
---
apiVersion: acme.dev/v1
kind: Worker
metadata: {name: crawler, namespace: %[1]s}
spec: {size: 8, queue: pages}
`, ns))
	eventually(t, 60*time.Second, "each member's Worker revised to its share", func() error {
		got := s.holders(acmeWorkerGVR, ns, "crawler")
		sizes := map[string]int64{}
		for m, obj := range got {
			sizes[m], _, _ = unstructured.NestedInt64(obj.Object, "spec", "size")
		}
		if len(sizes) != 2 || sizes["cluster1"] != 6 || sizes["cluster2"] != 2 {
			return fmt.Errorf("spec.size per member %v, want cluster1 6 and cluster2 2", sizes)
		}
		return nil
	})
}
