package executord

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
)

// Health is an object's state in a member, interpreted per kind.
type Health struct {
	Phase              string
	Message            string
	Replicas           int32
	ReadyReplicas      int32
	ObservedGeneration int64
}

// Interpret reads a member object's status (pure).
func Interpret(obj *unstructured.Unstructured) Health {
	gen := obj.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	h := Health{Phase: events.WorkApplied, ObservedGeneration: observed}
	num := func(path ...string) int32 {
		v, _, _ := unstructured.NestedInt64(obj.Object, path...)
		return int32(v)
	}
	switch obj.GetKind() {
	case "Deployment", "StatefulSet", "ReplicaSet":
		h.Replicas = 1
		if v, ok, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); ok {
			h.Replicas = int32(v)
		}
		h.ReadyReplicas = num("status", "readyReplicas")
		updated := num("status", "updatedReplicas")
		if obj.GetKind() == "ReplicaSet" {
			updated = num("status", "replicas")
		}
		if observed >= gen && h.ReadyReplicas >= h.Replicas && updated >= h.Replicas {
			h.Phase = events.WorkRunning
		} else {
			h.Phase = events.WorkProgressing
		}
	case "DaemonSet":
		h.Replicas, h.ReadyReplicas = num("status", "desiredNumberScheduled"), num("status", "numberReady")
		h.Phase = events.WorkProgressing
		if observed >= gen && h.ReadyReplicas >= h.Replicas {
			h.Phase = events.WorkRunning
		}
	case "Job":
		h.Phase = events.WorkProgressing
		if condition(obj, "Complete") == "True" || num("status", "active") > 0 {
			h.Phase = events.WorkRunning
		}
		if condition(obj, "Failed") == "True" {
			h.Phase, h.Message = events.WorkFailed, "job failed"
		}
	case "Pod":
		h.Phase = events.WorkProgressing
		if condition(obj, "Ready") == "True" {
			h.Phase = events.WorkRunning
		}
	case "PersistentVolumeClaim":
		if p, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); p == "Bound" {
			h.Phase = events.WorkRunning
		}
	default:
		switch condition(obj, "Ready") {
		case "True":
			h.Phase = events.WorkRunning
		case "False", "Unknown":
			h.Phase = events.WorkProgressing
		}
	}
	return h
}

func condition(obj *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}
