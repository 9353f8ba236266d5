package healthd

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Summarize adds up capacity from Nodes and Pods: allocatable of Ready,
// schedulable nodes; requests of pods bound to a node and not finished.
func Summarize(nodes []corev1.Node, pods []corev1.Pod) (allocatable, allocated corev1.ResourceList, total, ready int32) {
	allocatable, allocated = corev1.ResourceList{}, corev1.ResourceList{}
	for _, n := range nodes {
		total++
		if !nodeReady(n) || n.Spec.Unschedulable {
			continue
		}
		ready++
		for name, q := range n.Status.Allocatable {
			if !counted(name) {
				continue
			}
			add(allocatable, name, q)
		}
	}
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		add(allocated, corev1.ResourcePods, *resource.NewQuantity(1, resource.DecimalSI))
		for _, c := range p.Spec.Containers {
			for name, q := range c.Resources.Requests {
				if counted(name) {
					add(allocated, name, q)
				}
			}
		}
	}
	return allocatable, allocated, total, ready
}

func counted(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage, "nvidia.com/gpu":
		return true
	}
	return false
}

func add(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	cur := l[name]
	cur.Add(q)
	l[name] = cur
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
