package executord

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
)

func obj(kind string, generation int64, spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": "x", "generation": generation}}}
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
