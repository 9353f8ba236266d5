package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDynamicWeightsFollowTheMembersRealCapacity: cluster1 gets a second
// (kwok) node with 64 more cores; a Deployment divided by AvailableReplicas
// then lands mostly there, in proportion to what healthd reads from the
// members' Nodes and Pods.
func TestDynamicWeightsFollowTheMembersRealCapacity(t *testing.T) {
	s := newSystem(t)
	ctx := context.Background()
	c1 := s.member("cluster1")
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster1-big-" + fmt.Sprint(time.Now().UnixNano()%1e6), Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}, Labels: map[string]string{"type": "kwok"}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("1000")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("1000")},
		},
	}
	if _, err := c1.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c1.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })
	s.startAll()
	s.joinAll()
	// The arithmetic below needs every member's CPU free: pods of earlier
	// tests' namespaces (deleted asynchronously) must be gone first.
	eventually(t, 120*time.Second, "healthd to see cluster1's second node Ready and no CPU in use anywhere", func() error {
		out := s.mustCLI("get", "clusters", "-o", "wide")
		want := map[string]string{"cluster1": " 96/0 ", "cluster2": " 32/0 ", "cluster3": " 32/0 "}
		for _, l := range strings.Split(out, "\n") {
			for c, cpu := range want {
				if strings.HasPrefix(l, c+" ") && strings.Contains(l, cpu) && (c != "cluster1" || strings.Contains(l, " 2/2 ")) {
					delete(want, c)
				}
			}
		}
		if len(want) > 0 {
			return fmt.Errorf("waiting for %v:\n%s", want, out)
		}
		return nil
	})
	ns := uniqueNS("dynamic")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	s.applyYAML("dynamic.yaml", fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: batch, namespace: %[1]s}
spec:
  replicas: 10
  selector: {matchLabels: {app: batch}}
  template:
    metadata: {labels: {app: batch}}
    spec: {containers: [{name: c, image: busybox:1.36, resources: {requests: {cpu: "4"}}}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: batch, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: batch}]
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
`, ns))
	var placement string
	eventually(t, 60*time.Second, "a dynamic-weight placement", func() error {
		out := s.mustCLI("get", "placements", "-n", ns, "-o", "wide")
		if !strings.Contains(out, "DynamicWeight") || !strings.Contains(out, "true") {
			return fmt.Errorf("%s", out)
		}
		placement = out
		return nil
	})
	// Free cpu 96 : 32 : 32 cores at 4 per replica -> 24 : 8 : 8 replicas -> 10 divided 6 : 2 : 2.
	if !strings.Contains(placement, "cluster1:6,cluster2:2,cluster3:2") {
		t.Fatalf("want 6/2/2 from capacity 24:8:8, got:\n%s", placement)
	}
	for m, want := range map[string]int32{"cluster1": 6, "cluster2": 2, "cluster3": 2} {
		cs := s.member(m)
		eventually(t, 60*time.Second, "batch replicas in "+m, func() error {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, "batch", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if *d.Spec.Replicas != want {
				return fmt.Errorf("replicas %d, want %d", *d.Spec.Replicas, want)
			}
			return nil
		})
	}
}

// TestLabelChangesReschedule: a Duplicated workload selecting clusters by
// label follows a cluster's labels as they change (reference §1.1: Duplicated
// workloads follow every cluster change).
func TestLabelChangesReschedule(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.mustCLI("join", "cluster1", "--cluster-kubeconfig", filepath.Join(s.sandbox, "cluster1.kubeconfig"), "--labels", "env=prod")
	s.mustCLI("join", "cluster2", "--cluster-kubeconfig", filepath.Join(s.sandbox, "cluster2.kubeconfig"), "--labels", "env=dev")
	ns := uniqueNS("labels")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	s.applyYAML("labels.yaml", fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: prod-only, namespace: %[1]s}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: prod-only, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: prod-only}]
  placement: {clusterAffinity: {labelSelector: {matchLabels: {env: prod}}}}
`, ns))
	ctx := context.Background()
	present := func(m string) error {
		_, err := s.member(m).CoreV1().ConfigMaps(ns).Get(ctx, "prod-only", metav1.GetOptions{})
		return err
	}
	eventually(t, 60*time.Second, "prod-only in cluster1", func() error { return present("cluster1") })
	if present("cluster2") == nil {
		t.Fatal("prod-only reached cluster2 (env=dev)")
	}
	// cluster2 is relabelled prod, cluster1 dev: the workload moves.
	s.mustCLI("join", "cluster2", "--cluster-kubeconfig", filepath.Join(s.sandbox, "cluster2.kubeconfig"), "--labels", "env=prod")
	s.mustCLI("join", "cluster1", "--cluster-kubeconfig", filepath.Join(s.sandbox, "cluster1.kubeconfig"), "--labels", "env=dev")
	eventually(t, 60*time.Second, "prod-only in cluster2 and gone from cluster1", func() error {
		if err := present("cluster2"); err != nil {
			return err
		}
		if present("cluster1") == nil {
			return fmt.Errorf("still in cluster1")
		}
		return nil
	})
}
