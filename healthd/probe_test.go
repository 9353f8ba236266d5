package healthd

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTrackerHysteresis(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ok := ProbeResult{OK: true, Reachable: true}
	refused := ProbeResult{Message: "connection refused"}
	notReady := ProbeResult{Reachable: true, Message: "/readyz: 500"}
	steps := []struct {
		name    string
		in      ProbeResult
		state   string
		changed bool
		ready   bool
	}{
		{"the first good probe makes an unknown cluster Ready at once", ok, StateReady, true, true},
		{"one failed probe only makes it Suspect, still Ready for scheduling", refused, StateSuspect, true, true},
		{"a good probe clears the suspicion", ok, StateReady, true, true},
		{"a second failure streak starts Suspect", refused, StateSuspect, true, true},
		{"two failures in a row are still Suspect", refused, StateSuspect, false, true},
		{"the third failure in a row without an answer is Unreachable", refused, StateUnreachable, true, false},
		{"one good probe is not enough to recover", ok, StateUnreachable, false, false},
		{"the second good probe in a row recovers", ok, StateReady, true, true},
	}
	var tr Tracker
	for i, s := range steps {
		changed := tr.Observe(s.in, t0.Add(time.Duration(i)*time.Second), 3, 2)
		if tr.State != s.state || changed != s.changed || tr.Ready() != s.ready {
			t.Fatalf("%s: state %s changed %t ready %t; want %s %t %t", s.name, tr.State, changed, tr.Ready(), s.state, s.changed, s.ready)
		}
	}
	var nr Tracker
	nr.Observe(ok, t0, 3, 2)
	for range 3 {
		nr.Observe(notReady, t0, 3, 2)
	}
	if nr.State != StateNotReady || len(nr.Taints(t0)) != 1 || nr.Taints(t0)[0].Key != "cluster.karmada.io/not-ready" {
		t.Fatalf("an answering but unready apiserver: %s %v", nr.State, nr.Taints(t0))
	}
}

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
