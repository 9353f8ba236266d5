package executord

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/executord/render"
)

// Reference features §7.2 rules 3-6 as executord applies them.
func TestInterpretedWork(t *testing.T) {
	interp := &policy.Interpretation{
		ReplicaRevision:  `function ReviseReplica(o, n) o.spec.size = n; return o end`,
		Retention:        `function Retain(d, m) d.spec.paused = m.spec.paused; return d end`,
		StatusReflection: `function ReflectStatus(m) return {ready = m.status.ready} end`,
		Health:           `function InterpretHealth(m) return m.status.ready >= m.spec.size end`,
	}
	b := &events.Binding{Replicas: 4, Interpretation: interp}
	t.Run("revise writes the cluster's count", func(t *testing.T) {
		got, err := render.Revise(b.Interpretation, map[string]any{"spec": map[string]any{"size": 4.0}}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{"spec": map[string]any{"size": 3.0}}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("no revision script leaves the template's own count", func(t *testing.T) {
		tpl := map[string]any{"spec": map[string]any{"size": 4.0}}
		got, err := render.Revise(nil, tpl, 3)
		if err != nil || got["spec"].(map[string]any)["size"] != 4.0 {
			t.Errorf("got %v, %v", got, err)
		}
	})
	t.Run("a components binding is a workload, revised with 0", func(t *testing.T) {
		if !(&events.Binding{Components: []policy.Component{{Name: "a", Replicas: 1}}}).IsWorkload() {
			t.Error("not a workload")
		}
	})
	t.Run("retain keeps the member's field", func(t *testing.T) {
		got, err := retain(b, map[string]any{"spec": map[string]any{"size": 3.0}}, map[string]any{"spec": map[string]any{"size": 3.0, "paused": true}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{"spec": map[string]any{"size": 3.0, "paused": true}}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	member := func(ready float64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": 3.0}, "status": map[string]any{"ready": ready, "extra": "x"}}}
	}
	cases := []struct {
		name   string
		interp *policy.Interpretation
		obj    *unstructured.Unstructured
		want   events.WorkStatus
	}{
		{"health and reflected status from the scripts", interp, member(3), events.WorkStatus{Health: events.WorkHealthy, Status: map[string]any{"ready": 3.0}}},
		{"too few ready is unhealthy", interp, member(1), events.WorkStatus{Health: events.WorkUnhealthy, Status: map[string]any{"ready": 1.0}}},
		{"a failing health script is Unknown with its error", &policy.Interpretation{Health: `function InterpretHealth(m) return nil end`}, member(3),
			events.WorkStatus{Health: events.WorkHealthUnknown, Message: "InterpretHealth: expect the returned health type is boolean, but got nil"}},
		{"aggregation without reflection reflects the whole status", &policy.Interpretation{StatusAggregation: "x"}, member(2),
			events.WorkStatus{Health: "before", Status: map[string]any{"ready": 2.0, "extra": "x"}}},
		{"no scripts change nothing", nil, member(2), events.WorkStatus{Health: "before"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := events.WorkStatus{Health: "before"}
			observeInterpreted(c.interp, c.obj, &got)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
