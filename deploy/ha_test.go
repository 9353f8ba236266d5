package deploy_test

import (
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// natsReplicas is the size of the JetStream cluster: a majority survives one
// lost server.
const natsReplicas = 3

// TestWorkloadsSurviveANode checks what every workload needs to survive the
// loss or drain of one node: a PodDisruptionBudget of its own that lets one
// pod go at a time, and required anti-affinity that keeps its pods on
// different nodes.
func TestWorkloadsSurviveANode(t *testing.T) {
	ms := loadManifests(t)
	var pdbs []*policyv1.PodDisruptionBudget
	for _, m := range ms {
		if p, ok := m.obj.(*policyv1.PodDisruptionBudget); ok {
			pdbs = append(pdbs, p)
		}
	}
	for _, w := range workloads(ms) {
		t.Run(w.String(), func(t *testing.T) {
			if err := checkPDB(pdbs, w); err != nil {
				t.Error(err)
			}
			if err := checkAntiAffinity(w); err != nil {
				t.Error(err)
			}
		})
	}
}

// checkPDB reports unless exactly one PDB selects the workload's pods, with
// maxUnavailable 1.
func checkPDB(pdbs []*policyv1.PodDisruptionBudget, w workload) error {
	var mine []*policyv1.PodDisruptionBudget
	for _, p := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(w.labels)) {
			mine = append(mine, p)
		}
	}
	if len(mine) != 1 {
		return fmt.Errorf("%d PodDisruptionBudgets select its pods, want 1", len(mine))
	}
	want := intstr.FromInt32(1)
	if p := mine[0]; p.Spec.MinAvailable != nil || p.Spec.MaxUnavailable == nil || *p.Spec.MaxUnavailable != want {
		return fmt.Errorf("PodDisruptionBudget %s: want maxUnavailable: 1 and no minAvailable", p.Name)
	}
	return nil
}

// checkAntiAffinity reports unless a required anti-affinity term on
// kubernetes.io/hostname selects the workload's own pods.
func checkAntiAffinity(w workload) error {
	a := w.spec.Affinity
	if a != nil && a.PodAntiAffinity != nil {
		for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
			if err == nil && term.TopologyKey == corev1.LabelHostname && !sel.Empty() && sel.Matches(labels.Set(w.labels)) {
				return nil
			}
		}
	}
	return fmt.Errorf("want requiredDuringSchedulingIgnoredDuringExecution pod anti-affinity on %s selecting its own pods", corev1.LabelHostname)
}

// TestDaemonsHaveAFencedStandby checks the daemons' second replica: until
// issue 15's leader election, a ReadWriteOncePod claim shared by both pods
// keeps the second one unscheduled while the first exists, so two instances
// never share a durable consumer.
func TestDaemonsHaveAFencedStandby(t *testing.T) {
	ms := loadManifests(t)
	for name := range daemons {
		t.Run(name, func(t *testing.T) {
			d := find[appsv1.Deployment](ms, name)
			if d == nil {
				t.Fatalf("no Deployment %s", name)
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
				t.Errorf("replicas: want 2 or more (an active instance and a standby)")
			}
			if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
				t.Errorf("strategy: want Recreate, so that a rollout never starts a pod before the old one is gone")
			}
			if err := checkFence(ms, d.Spec.Template.Spec); err != nil {
				t.Error(err)
			}
		})
	}
}

// checkFence reports unless the pod claims a ReadWriteOncePod PVC defined in
// the manifests.
func checkFence(ms []manifest, ps corev1.PodSpec) error {
	for _, v := range ps.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc := find[corev1.PersistentVolumeClaim](ms, v.PersistentVolumeClaim.ClaimName)
		if pvc == nil {
			return fmt.Errorf("volume %s: PVC %s is not in the manifests", v.Name, v.PersistentVolumeClaim.ClaimName)
		}
		if slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}) {
			return nil
		}
		return fmt.Errorf("PVC %s: accessModes %v, want [ReadWriteOncePod] (one pod at a time)", pvc.Name, pvc.Spec.AccessModes)
	}
	return fmt.Errorf("no ReadWriteOncePod PVC fences the standby: two instances would share the durable consumers")
}

// TestNATSIsAJetStreamCluster checks the three-server cluster: replicas,
// parallel start, the cluster port on the pods and the governing Service,
// and routes naming every server.
func TestNATSIsAJetStreamCluster(t *testing.T) {
	ms := loadManifests(t)
	sts := find[appsv1.StatefulSet](ms, "nats")
	if sts == nil {
		t.Fatal("no StatefulSet nats")
	}
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != natsReplicas {
		t.Errorf("replicas: want %d", natsReplicas)
	}
	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		t.Errorf("podManagementPolicy %q: want Parallel (no server is ready before a quorum exists)", sts.Spec.PodManagementPolicy)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	if got := containerPort(c, intstr.FromString("cluster")); got != 6222 {
		t.Errorf("container port cluster: got %d, want 6222", got)
	}
	gov := find[corev1.Service](ms, sts.Spec.ServiceName)
	if gov == nil {
		t.Fatalf("no governing Service %s", sts.Spec.ServiceName)
	}
	if !gov.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s: want publishNotReadyAddresses (the servers find each other before they are ready)", gov.Name)
	}
	if !slices.ContainsFunc(gov.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == 6222 }) {
		t.Errorf("Service %s: no port 6222 for the routes", gov.Name)
	}
	cm := find[corev1.ConfigMap](ms, "nats-config")
	if cm == nil {
		t.Fatal("no ConfigMap nats-config")
	}
	conf := cm.Data["nats.conf"]
	var want, got []string
	for i := range natsReplicas {
		want = append(want, fmt.Sprintf("%s-%d", sts.Name, i))
	}
	re := regexp.MustCompile(`nats://([a-z0-9-]+)\.` + regexp.QuoteMeta(gov.Name+"."+namespace) + `\.svc:6222`)
	for _, m := range re.FindAllStringSubmatch(conf, -1) {
		got = append(got, m[1])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cluster routes (-want +got): one per server, through the governing Service:\n%s", diff)
	}
	if !regexp.MustCompile(`(?m)^\s*sync_interval:\s*always\s*$`).MatchString(conf) {
		t.Errorf("jetstream sync_interval: want always (a power loss on a majority loses acknowledged events otherwise, DESIGN.md §2)")
	}
	if !regexp.MustCompile(`(?m)^\s*server_name:\s*\$SERVER_NAME\s*$`).MatchString(conf) {
		t.Errorf("server_name: want $SERVER_NAME (the pod name, stable across restarts)")
	}
}
