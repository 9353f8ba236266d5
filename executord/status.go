package executord

import (
	"time"

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
	// Verdict is events.WorkHealthy or events.WorkUnhealthy, as Karmada's
	// default health interpreter judges the kind (see verdict).
	Verdict string
	// AvailableReplicas and UnavailableReplicas (desired - available, never
	// negative) of a workload; both 0 for other kinds.
	AvailableReplicas   int32
	UnavailableReplicas int32
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
		h.Replicas = specReplicas(obj)
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
	var desired int32
	h.Verdict, desired, h.AvailableReplicas = verdict(obj)
	h.UnavailableReplicas = max(0, desired-h.AvailableReplicas)
	return h
}

// verdict is Karmada's default health interpreter
// (pkg/resourceinterpreter/default/native/healthy.go), keyed by group and
// kind, with the desired and available replicas of workloads:
//
//   - apps Deployment: the controller observed the generation, updatedReplicas
//     >= spec.replicas and availableReplicas >= updatedReplicas.
//   - apps StatefulSet: observed generation, updatedReplicas >= spec.replicas
//     minus a rolling-update partition, availableReplicas >= spec.replicas and
//     >= updatedReplicas.
//   - apps ReplicaSet: observed generation, availableReplicas >= spec.replicas.
//   - apps DaemonSet: observed generation, updatedNumberScheduled >=
//     desiredNumberScheduled and numberAvailable >= updatedNumberScheduled
//     (desired and available are those two node counts).
//   - Pod: Succeeded, or Running with Ready=True (1 desired, 1 available when
//     Healthy).
//   - Service: any type but LoadBalancer; a LoadBalancer once an ingress IP
//     or hostname is assigned. networking.k8s.io Ingress: once it has one.
//   - PersistentVolumeClaim: Bound. policy PodDisruptionBudget:
//     currentHealthy >= desiredHealthy.
//
// Anything else (ConfigMap, Secret, Job, a custom resource without an
// interpreter's health script) is Healthy, as Karmada's work status
// controller treats a kind without a health interpreter. So application
// failover never acts on it (it is never Unhealthy: a Job that failed
// would only fail again elsewhere), and a graceful eviction whose
// replacement holds such a kind is purged once the new copies are applied,
// as Karmada purges it; with Unknown the evicted copy was never purged.
func verdict(obj *unstructured.Unstructured) (v string, desired, available int32) {
	gen := obj.GetGeneration()
	i64 := func(path ...string) int64 {
		n, _, _ := unstructured.NestedInt64(obj.Object, path...)
		return n
	}
	i32 := func(path ...string) int32 { return int32(i64(path...)) }
	observed := i64("status", "observedGeneration") >= gen
	healthy := func(ok bool) string {
		if ok {
			return events.WorkHealthy
		}
		return events.WorkUnhealthy
	}
	gvk := obj.GroupVersionKind()
	switch gvk.Group + "/" + gvk.Kind {
	case "apps/Deployment":
		desired, available = specReplicas(obj), i32("status", "availableReplicas")
		updated := i32("status", "updatedReplicas")
		return healthy(observed && updated >= desired && available >= updated), desired, available
	case "apps/StatefulSet":
		desired, available = specReplicas(obj), i32("status", "availableReplicas")
		updated := i32("status", "updatedReplicas")
		partition := i32("spec", "updateStrategy", "rollingUpdate", "partition")
		return healthy(observed && updated >= desired-partition && available >= desired && available >= updated), desired, available
	case "apps/ReplicaSet":
		desired, available = specReplicas(obj), i32("status", "availableReplicas")
		return healthy(observed && available >= desired), desired, available
	case "apps/DaemonSet":
		desired, available = i32("status", "desiredNumberScheduled"), i32("status", "numberAvailable")
		updated := i32("status", "updatedNumberScheduled")
		return healthy(observed && updated >= desired && available >= updated), desired, available
	case "/Pod":
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		ok := phase == "Succeeded" || (phase == "Running" && condition(obj, "Ready") == "True")
		if ok {
			available = 1
		}
		return healthy(ok), 1, available
	case "/Service":
		if t, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); t != "LoadBalancer" {
			return events.WorkHealthy, 0, 0
		}
		return healthy(hasIngress(obj)), 0, 0
	case "networking.k8s.io/Ingress":
		return healthy(hasIngress(obj)), 0, 0
	case "/PersistentVolumeClaim":
		phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
		return healthy(phase == "Bound"), 0, 0
	case "policy/PodDisruptionBudget":
		return healthy(i64("status", "currentHealthy") >= i64("status", "desiredHealthy")), 0, 0
	}
	return events.WorkHealthy, 0, 0
}

// Reflect is the member object's status as Karmada's native status
// reflection hands it to aggregation (work manifestStatuses[].status), for
// the kinds whose hub status is aggregated from it: a batch Job's active,
// succeeded and failed counts, conditions, startTime and completionTime; a
// Service's loadBalancer; a Pod's whole status (Karmada has no Pod
// handler, so it reflects everything); a Deployment's, ReplicaSet's,
// StatefulSet's and DaemonSet's replica counts, which the hub sums (the
// members' status.replicas, not their spec's). nil for other kinds and
// for an object without status, as Karmada reflects nothing then.
func Reflect(obj *unstructured.Unstructured) map[string]any {
	st, _, _ := unstructured.NestedMap(obj.Object, "status")
	if len(st) == 0 {
		return nil
	}
	keep := func(fields ...string) map[string]any {
		out := map[string]any{}
		for _, f := range fields {
			if v, ok := st[f]; ok {
				out[f] = v
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	gvk := obj.GroupVersionKind()
	switch gvk.Group + "/" + gvk.Kind {
	case "batch/Job":
		return keep("active", "succeeded", "failed", "conditions", "startTime", "completionTime")
	case "/Service":
		return keep("loadBalancer")
	case "/Pod":
		return st
	case "apps/Deployment", "apps/ReplicaSet", "apps/StatefulSet":
		return keep("replicas", "updatedReplicas", "currentReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")
	case "apps/DaemonSet":
		return keep("desiredNumberScheduled", "currentNumberScheduled", "updatedNumberScheduled", "numberReady", "numberAvailable", "numberUnavailable")
	}
	return nil
}

// specReplicas is spec.replicas, 1 when absent (the API server's default).
func specReplicas(obj *unstructured.Unstructured) int32 {
	if v, ok, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); ok {
		return int32(v)
	}
	return 1
}

// hasIngress: status.loadBalancer.ingress holds an IP or a hostname.
func hasIngress(obj *unstructured.Unstructured) bool {
	ing, _, _ := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	for _, i := range ing {
		m, _ := i.(map[string]any)
		if ip, _ := m["ip"].(string); ip != "" {
			return true
		}
		if host, _ := m["hostname"].(string); host != "" {
			return true
		}
	}
	return false
}

// unhealthySince says since when an object has not been Healthy (pure):
// prev's time when the previous status was already Unhealthy (so the time
// stays the same across publications and executord restarts, whose work
// records start from the last published status), now when this
// observation starts a run, and nil when the object is Healthy or its
// health is unknown (an Unknown observation ends a run).
func unhealthySince(prev events.WorkStatus, verdict string, now time.Time) *time.Time {
	if verdict != events.WorkUnhealthy {
		return nil
	}
	t := now.UTC()
	if prev.Health == events.WorkUnhealthy && prev.UnhealthySince != nil {
		t = *prev.UnhealthySince
	}
	return &t
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
