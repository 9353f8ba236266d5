package healthd

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events/policy"
)

// Cluster states.
const (
	StateUnknown     = "Unknown"
	StateReady       = "Ready"
	StateSuspect     = "Suspect"
	StateNotReady    = "NotReady"
	StateUnreachable = "Unreachable"
)

// ProbeResult is one /readyz probe.
type ProbeResult struct {
	OK        bool
	Reachable bool // false: no HTTP answer at all (connection refused, timeout)
	Message   string
	Latency   time.Duration
}

// Tracker is the per-cluster state machine: Unknown/Ready -> Suspect on a
// failed probe -> NotReady (answered, not ready) or Unreachable (no answer)
// after FailureThreshold failures in a row; back to Ready after
// SuccessThreshold good probes in a row (the first probe of an Unknown
// cluster decides at once).
type Tracker struct {
	State     string
	Since     time.Time
	Message   string
	failures  int
	successes int
}

// Observe feeds one probe result; it returns true when the state changed.
func (t *Tracker) Observe(r ProbeResult, now time.Time, failureThreshold, successThreshold int) bool {
	prev := t.State
	if r.OK {
		t.failures = 0
		t.successes++
		switch t.State {
		case StateUnknown, "", StateSuspect:
			t.State = StateReady
		case StateNotReady, StateUnreachable:
			if t.successes >= successThreshold {
				t.State = StateReady
			}
		}
		t.Message = ""
	} else {
		t.successes = 0
		t.failures++
		t.Message = r.Message
		bad := StateNotReady
		if !r.Reachable {
			bad = StateUnreachable
		}
		switch {
		case t.State == "" || t.State == StateUnknown:
			if t.failures >= failureThreshold {
				t.State = bad
			}
		case t.failures >= failureThreshold:
			t.State = bad
		case t.State == StateReady:
			t.State = StateSuspect
		}
	}
	if t.State != prev {
		t.Since = now
		return true
	}
	return false
}

// Ready reports whether the state counts as Ready for scheduling (a Suspect
// cluster is still Ready: one slow probe changes nothing).
func (t *Tracker) Ready() bool { return t.State == StateReady || t.State == StateSuspect }

// Taints are what Karmada's cluster controller sets for the state (NoSchedule only).
func (t *Tracker) Taints(now time.Time) []corev1.Taint {
	ts := metaNow(t.Since)
	switch t.State {
	case StateNotReady, StateUnknown, "":
		return []corev1.Taint{{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule, TimeAdded: ts}}
	case StateUnreachable:
		return []corev1.Taint{{Key: policy.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: ts}}
	}
	return nil
}

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
