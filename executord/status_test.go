package executord

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
)

// apiVersions of the kinds the tests use (anything else is a v1 kind).
var apiVersions = map[string]string{
	"Deployment": "apps/v1", "StatefulSet": "apps/v1", "ReplicaSet": "apps/v1", "DaemonSet": "apps/v1",
	"Job": "batch/v1", "Ingress": "networking.k8s.io/v1", "PodDisruptionBudget": "policy/v1", "Widget": "example.com/v1",
}

func obj(kind string, generation int64, spec, status map[string]any) *unstructured.Unstructured {
	apiVersion := apiVersions[kind]
	if apiVersion == "" {
		apiVersion = "v1"
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x", "generation": generation}}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestInterpretHealthPerKind(t *testing.T) {
	cond := func(typ, st string) []any { return []any{map[string]any{"type": typ, "status": st}} }
	cases := []struct {
		name  string
		obj   *unstructured.Unstructured
		phase string
		ready int32
	}{
		{"a Deployment with every replica ready and updated is Running", obj("Deployment", 2, map[string]any{"replicas": int64(3)}, map[string]any{"observedGeneration": int64(2), "readyReplicas": int64(3), "updatedReplicas": int64(3)}), events.WorkRunning, 3},
		{"a Deployment whose controller has not seen the new generation is Progressing", obj("Deployment", 3, map[string]any{"replicas": int64(3)}, map[string]any{"observedGeneration": int64(2), "readyReplicas": int64(3), "updatedReplicas": int64(3)}), events.WorkProgressing, 3},
		{"a StatefulSet short of ready replicas is Progressing", obj("StatefulSet", 1, map[string]any{"replicas": int64(2)}, map[string]any{"observedGeneration": int64(1), "readyReplicas": int64(1), "updatedReplicas": int64(2)}), events.WorkProgressing, 1},
		{"a DaemonSet ready on every scheduled node is Running", obj("DaemonSet", 1, nil, map[string]any{"observedGeneration": int64(1), "desiredNumberScheduled": int64(4), "numberReady": int64(4)}), events.WorkRunning, 4},
		{"a failed Job is Failed", obj("Job", 1, nil, map[string]any{"conditions": cond("Failed", "True")}), events.WorkFailed, 0},
		{"a completed Job is Running (done)", obj("Job", 1, nil, map[string]any{"conditions": cond("Complete", "True")}), events.WorkRunning, 0},
		{"a Pod without Ready is Progressing", obj("Pod", 1, nil, map[string]any{"conditions": cond("Ready", "False")}), events.WorkProgressing, 0},
		{"a bound PVC is Running", obj("PersistentVolumeClaim", 1, nil, map[string]any{"phase": "Bound"}), events.WorkRunning, 0},
		{"a Service is Applied", obj("Service", 1, nil, nil), events.WorkApplied, 0},
		{"an unknown kind with Ready=True is Running", obj("Widget", 1, nil, map[string]any{"conditions": cond("Ready", "True")}), events.WorkRunning, 0},
		{"an unknown kind without conditions is Applied", obj("Widget", 1, nil, nil), events.WorkApplied, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := Interpret(c.obj)
			if h.Phase != c.phase || h.ReadyReplicas != c.ready {
				t.Fatalf("got %s ready %d, want %s ready %d", h.Phase, h.ReadyReplicas, c.phase, c.ready)
			}
		})
	}
}

func TestInterpretVerdictFollowsKarmadasDefaultInterpreter(t *testing.T) {
	cond := func(typ, st string) []any { return []any{map[string]any{"type": typ, "status": st}} }
	n := func(v int64) int64 { return v }
	m := func(kv ...any) map[string]any {
		out := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	lbIngress := func(k, v string) map[string]any {
		return m("loadBalancer", m("ingress", []any{m(k, v)}))
	}
	cases := []struct {
		name                   string
		obj                    *unstructured.Unstructured
		verdict                string
		available, unavailable int32
	}{
		{"a Deployment whose every replica is updated and available is Healthy",
			obj("Deployment", 2, m("replicas", n(3)), m("observedGeneration", n(2), "updatedReplicas", n(3), "availableReplicas", n(3))), events.WorkHealthy, 3, 0},
		{"a Deployment whose controller has not observed the generation is Unhealthy",
			obj("Deployment", 3, m("replicas", n(3)), m("observedGeneration", n(2), "updatedReplicas", n(3), "availableReplicas", n(3))), events.WorkUnhealthy, 3, 0},
		{"a Deployment still rolling out (fewer updated replicas than desired) is Unhealthy",
			obj("Deployment", 2, m("replicas", n(3)), m("observedGeneration", n(2), "updatedReplicas", n(2), "availableReplicas", n(3))), events.WorkUnhealthy, 3, 0},
		{"a Deployment with an updated replica not yet available is Unhealthy, one unavailable",
			obj("Deployment", 2, m("replicas", n(3)), m("observedGeneration", n(2), "updatedReplicas", n(3), "availableReplicas", n(2))), events.WorkUnhealthy, 2, 1},
		{"a Deployment with no replica available counts every desired replica unavailable",
			obj("Deployment", 1, m("replicas", n(4)), m("observedGeneration", n(1))), events.WorkUnhealthy, 0, 4},
		{"a Deployment scaled to zero is Healthy",
			obj("Deployment", 1, m("replicas", n(0)), m("observedGeneration", n(1))), events.WorkHealthy, 0, 0},
		{"a Deployment without spec.replicas wants one replica",
			obj("Deployment", 1, nil, m("observedGeneration", n(1))), events.WorkUnhealthy, 0, 1},
		{"a Deployment with more available replicas than desired while scaling down has none unavailable",
			obj("Deployment", 2, m("replicas", n(2)), m("observedGeneration", n(2), "updatedReplicas", n(2), "availableReplicas", n(3))), events.WorkHealthy, 3, 0},
		{"a StatefulSet whose every pod is updated and available is Healthy",
			obj("StatefulSet", 1, m("replicas", n(2)), m("observedGeneration", n(1), "updatedReplicas", n(2), "availableReplicas", n(2))), events.WorkHealthy, 2, 0},
		{"a StatefulSet with a partition is Healthy once the pods at or above it are updated",
			obj("StatefulSet", 1, m("replicas", n(3), "updateStrategy", m("rollingUpdate", m("partition", n(2)))), m("observedGeneration", n(1), "updatedReplicas", n(1), "availableReplicas", n(3))), events.WorkHealthy, 3, 0},
		{"a StatefulSet with every pod updated but one unavailable is Unhealthy",
			obj("StatefulSet", 1, m("replicas", n(3)), m("observedGeneration", n(1), "updatedReplicas", n(3), "availableReplicas", n(2))), events.WorkUnhealthy, 2, 1},
		{"a ReplicaSet with every replica available is Healthy",
			obj("ReplicaSet", 1, m("replicas", n(2)), m("observedGeneration", n(1), "availableReplicas", n(2))), events.WorkHealthy, 2, 0},
		{"a ReplicaSet short of available replicas is Unhealthy",
			obj("ReplicaSet", 1, m("replicas", n(2)), m("observedGeneration", n(1), "availableReplicas", n(1))), events.WorkUnhealthy, 1, 1},
		{"a DaemonSet updated and available on every scheduled node is Healthy",
			obj("DaemonSet", 1, nil, m("observedGeneration", n(1), "desiredNumberScheduled", n(4), "updatedNumberScheduled", n(4), "numberAvailable", n(4))), events.WorkHealthy, 4, 0},
		{"a DaemonSet whose rollout has not reached every node is Unhealthy",
			obj("DaemonSet", 1, nil, m("observedGeneration", n(1), "desiredNumberScheduled", n(4), "updatedNumberScheduled", n(3), "numberAvailable", n(4))), events.WorkUnhealthy, 4, 0},
		{"a DaemonSet unavailable on one node is Unhealthy, one unavailable",
			obj("DaemonSet", 1, nil, m("observedGeneration", n(1), "desiredNumberScheduled", n(4), "updatedNumberScheduled", n(4), "numberAvailable", n(3))), events.WorkUnhealthy, 3, 1},
		{"a running and ready Pod is Healthy",
			obj("Pod", 1, nil, m("phase", "Running", "conditions", cond("Ready", "True"))), events.WorkHealthy, 1, 0},
		{"a running Pod that is not ready is Unhealthy",
			obj("Pod", 1, nil, m("phase", "Running", "conditions", cond("Ready", "False"))), events.WorkUnhealthy, 0, 1},
		{"a Pod that succeeded is Healthy",
			obj("Pod", 1, nil, m("phase", "Succeeded")), events.WorkHealthy, 1, 0},
		{"a pending Pod is Unhealthy",
			obj("Pod", 1, nil, m("phase", "Pending")), events.WorkUnhealthy, 0, 1},
		{"a ClusterIP Service is Healthy",
			obj("Service", 1, m("type", "ClusterIP"), nil), events.WorkHealthy, 0, 0},
		{"a LoadBalancer Service without an ingress address is Unhealthy",
			obj("Service", 1, m("type", "LoadBalancer"), m("loadBalancer", m())), events.WorkUnhealthy, 0, 0},
		{"a LoadBalancer Service with an ingress IP is Healthy",
			obj("Service", 1, m("type", "LoadBalancer"), lbIngress("ip", "10.0.0.1")), events.WorkHealthy, 0, 0},
		{"an Ingress with a hostname is Healthy",
			obj("Ingress", 1, nil, lbIngress("hostname", "lb.example.com")), events.WorkHealthy, 0, 0},
		{"an Ingress without an address is Unhealthy",
			obj("Ingress", 1, nil, nil), events.WorkUnhealthy, 0, 0},
		{"a bound PersistentVolumeClaim is Healthy",
			obj("PersistentVolumeClaim", 1, nil, m("phase", "Bound")), events.WorkHealthy, 0, 0},
		{"a pending PersistentVolumeClaim is Unhealthy",
			obj("PersistentVolumeClaim", 1, nil, m("phase", "Pending")), events.WorkUnhealthy, 0, 0},
		{"a PodDisruptionBudget short of healthy pods is Unhealthy",
			obj("PodDisruptionBudget", 1, nil, m("currentHealthy", n(1), "desiredHealthy", n(2))), events.WorkUnhealthy, 0, 0},
		{"a failed Job is Healthy: Karmada has no health interpreter for Jobs and treats such kinds as healthy",
			obj("Job", 1, nil, m("conditions", cond("Failed", "True"))), events.WorkHealthy, 0, 0},
		{"a ConfigMap is Healthy",
			obj("ConfigMap", 1, nil, nil), events.WorkHealthy, 0, 0},
		{"a custom kind with Ready=False is Healthy: no interpreter judges it",
			obj("Widget", 1, nil, m("conditions", cond("Ready", "False"))), events.WorkHealthy, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := Interpret(c.obj)
			want := [3]any{c.verdict, c.available, c.unavailable}
			got := [3]any{h.Verdict, h.AvailableReplicas, h.UnavailableReplicas}
			if want != got {
				t.Fatalf("verdict, available, unavailable: want %v, got %v", want, got)
			}
		})
	}
}

// apps/Deployment's rule would find it Unhealthy (0 of 1 available); a
// Deployment of another group has no rule, so it is Healthy.
func TestInterpretDoesNotJudgeACustomDeploymentKindAsAnAppsDeployment(t *testing.T) {
	u := obj("Deployment", 1, map[string]any{"replicas": int64(1)}, map[string]any{"observedGeneration": int64(1)})
	u.SetAPIVersion("example.com/v1")
	if h := Interpret(u); h.Verdict != events.WorkHealthy || h.AvailableReplicas != 0 {
		t.Fatalf("verdict = %s, %d available, want %s and none counted", h.Verdict, h.AvailableReplicas, events.WorkHealthy)
	}
}

func TestUnhealthySince(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	now := t0.Add(90 * time.Second)
	at := func(t time.Time) *time.Time { return &t }
	unhealthy := events.WorkStatus{Health: events.WorkUnhealthy, UnhealthySince: at(t0)}
	// A status read back from the work stream after a restart (JSON round trip).
	var restored events.WorkStatus
	b, _ := json.Marshal(unhealthy)
	if err := json.Unmarshal(b, &restored); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		prev    events.WorkStatus
		verdict string
		want    *time.Time
	}{
		{"the first Unhealthy observation starts the run now", events.WorkStatus{}, events.WorkUnhealthy, at(now)},
		{"a later Unhealthy observation keeps the time the run began", unhealthy, events.WorkUnhealthy, at(t0)},
		{"a status restored from the work stream after a restart keeps its time", restored, events.WorkUnhealthy, at(t0)},
		{"an Unhealthy observation after a Healthy one starts a new run", events.WorkStatus{Health: events.WorkHealthy}, events.WorkUnhealthy, at(now)},
		{"an Unhealthy observation after an Unknown one starts a new run", events.WorkStatus{Health: events.WorkHealthUnknown}, events.WorkUnhealthy, at(now)},
		{"an Unhealthy status without a time (an older executord) starts the run now", events.WorkStatus{Health: events.WorkUnhealthy}, events.WorkUnhealthy, at(now)},
		{"a Healthy observation clears the time", unhealthy, events.WorkHealthy, nil},
		{"an Unknown observation keeps nothing", unhealthy, events.WorkHealthUnknown, nil},
		{"an empty verdict is unknown and keeps nothing", unhealthy, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := unhealthySince(c.prev, c.verdict, now)
			if (got == nil) != (c.want == nil) || (got != nil && !got.Equal(*c.want)) {
				t.Fatalf("want %v, got %v", c.want, got)
			}
		})
	}
}

func TestReflectHandsAggregationWhatKarmadasNativeReflectionDoes(t *testing.T) {
	cond := []any{map[string]any{"type": "Complete", "status": "True"}}
	ingress := map[string]any{"ingress": []any{map[string]any{"ip": "10.0.0.7"}}}
	pod := map[string]any{"phase": "Running", "podIP": "10.244.0.9", "containerStatuses": []any{map[string]any{"name": "app", "ready": true}}}
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want map[string]any
	}{
		{"a Job: its counts, conditions and times, not its other fields", obj("Job", 1, nil, map[string]any{
			"active": int64(0), "succeeded": int64(2), "failed": int64(1), "conditions": cond, "ready": int64(0),
			"startTime": "2026-12-01T20:00:00Z", "completionTime": "2026-12-01T20:01:00Z", "uncountedTerminatedPods": map[string]any{}}),
			map[string]any{"active": int64(0), "succeeded": int64(2), "failed": int64(1), "conditions": cond,
				"startTime": "2026-12-01T20:00:00Z", "completionTime": "2026-12-01T20:01:00Z"}},
		{"a Service: its load balancer only", obj("Service", 1, map[string]any{"type": "LoadBalancer"},
			map[string]any{"loadBalancer": ingress, "conditions": []any{}}), map[string]any{"loadBalancer": ingress}},
		{"a Pod: its whole status", obj("Pod", 1, nil, pod), pod},
		{"a Job without status: nothing", obj("Job", 1, nil, nil), nil},
		{"a Deployment: its replica counts, which the hub sums, and not its conditions",
			obj("Deployment", 1, nil, map[string]any{"replicas": int64(4), "updatedReplicas": int64(2), "readyReplicas": int64(3), "observedGeneration": int64(1), "conditions": []any{}}),
			map[string]any{"replicas": int64(4), "updatedReplicas": int64(2), "readyReplicas": int64(3)}},
		{"a DaemonSet: its node counts",
			obj("DaemonSet", 1, nil, map[string]any{"desiredNumberScheduled": int64(2), "currentNumberScheduled": int64(2), "numberReady": int64(1)}),
			map[string]any{"desiredNumberScheduled": int64(2), "currentNumberScheduled": int64(2), "numberReady": int64(1)}},
		{"a Job of another group: nothing", func() *unstructured.Unstructured {
			u := obj("Job", 1, nil, map[string]any{"succeeded": int64(1)})
			u.SetAPIVersion("example.com/v1")
			return u
		}(), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Reflect(c.obj)); diff != "" {
				t.Errorf("Reflect (-want +got):\n%s", diff)
			}
		})
	}
}
