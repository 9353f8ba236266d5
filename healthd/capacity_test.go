package healthd

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSummarizeCountsReadyNodesAndRunningPods(t *testing.T) {
	q := resource.MustParse
	node := func(name string, ready bool, cpu string) corev1.Node {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: q(cpu), corev1.ResourcePods: q("110"), "nvidia.com/gpu": q("2")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
	}
	pod := func(node string, phase corev1.PodPhase, cpu string) corev1.Pod {
		return corev1.Pod{Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q(cpu)}}}}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	alloc, used, total, ready := Summarize(
		[]corev1.Node{node("a", true, "8"), node("b", true, "4"), node("c", false, "16")},
		[]corev1.Pod{pod("a", corev1.PodRunning, "500m"), pod("b", corev1.PodRunning, "1"), pod("a", corev1.PodSucceeded, "2"), pod("", corev1.PodPending, "3")})
	if total != 3 || ready != 2 {
		t.Fatalf("nodes %d ready %d", total, ready)
	}
	if alloc.Cpu().String() != "12" || alloc.Name("nvidia.com/gpu", resource.DecimalSI).String() != "4" {
		t.Fatalf("allocatable %v", alloc)
	}
	if used.Cpu().String() != "1500m" || used.Pods().String() != "2" {
		t.Fatalf("allocated %v", used)
	}
}
