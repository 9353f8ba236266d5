package binding

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

// policyd keeps templates compacted (no decoded object); a compacted
// template must answer what selectors, bindings and propagateDeps ask
// exactly as the full one does.
func TestACompactedTemplateAnswersAsTheFullOne(t *testing.T) {
	doc := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","labels":{"app":"web","tier":"front"}},
	  "spec":{"replicas":5,"template":{"spec":{"serviceAccountName":"runner","volumes":[{"name":"c","configMap":{"name":"settings"}}],
	  "containers":[{"name":"a","image":"nginx","envFrom":[{"secretRef":{"name":"creds"}}],"resources":{"requests":{"cpu":"250m","memory":"64Mi","nvidia.com/gpu":"1"}}}]}}}}`
	var obj map[string]any
	if err := json.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	rec := events.ObjectRecord{Key: events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}, APIVersion: "apps/v1", Object: json.RawMessage(doc), Generation: 1}
	full := NewTemplate(rec, obj)
	small := NewTemplate(rec, obj)
	small.Compact()
	if small.Object != nil {
		t.Fatal("compact must drop the decoded object")
	}
	if a, b := full.Facts(), small.Facts(); !reflect.DeepEqual(a, b) {
		t.Errorf("facts: %+v vs %+v", a, b)
	}
	r1, q1 := full.Workload()
	r2, q2 := small.Workload()
	if r1 != 5 || r1 != r2 || q1.Cpu().MilliValue() != 250 || !reflect.DeepEqual(q1, q2) {
		t.Errorf("workload: %d %v vs %d %v", r1, q1, r2, q2)
	}
	d1, d2 := full.Dependencies(), small.Dependencies()
	if len(d1) != 3 || !reflect.DeepEqual(d1, d2) {
		t.Errorf("dependencies: %v vs %v", d1, d2)
	}
	if diff := cmp.Diff(bindingJSON(t, Build(full, nil, nil, nil)), bindingJSON(t, Build(small, nil, nil, nil))); diff != "" {
		t.Errorf("bindings differ (-full +compacted):\n%s", diff)
	}
}

// bindingJSON is a binding as it is published.
func bindingJSON(t *testing.T, b events.Binding) string {
	t.Helper()
	j, err := events.MarshalJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

// A template's desired replicas come from policy.ReplicaField, the field
// executord's renderer writes: a kind of the same name in another API
// group is not a divided workload (before the rule was shared, policyd
// divided such a template's spec.replicas while the renderer left every
// cluster's copy at the full count).
func TestWorkloadReadsTheReplicaFieldTheRendererWrites(t *testing.T) {
	for _, tc := range []struct {
		name         string
		apiVersion   string
		kind         string
		spec         map[string]any
		wantReplicas int32
	}{
		{"an apps/v1 Deployment's spec.replicas", "apps/v1", "Deployment", map[string]any{"replicas": int64(4)}, 4},
		{"a Deployment without replicas wants one", "apps/v1", "Deployment", map[string]any{}, 1},
		{"a batch/v1 Job's spec.parallelism", "batch/v1", "Job", map[string]any{"parallelism": int64(3), "completions": int64(9)}, 3},
		{"a custom resource called Deployment is not divided", "example.com/v1", "Deployment", map[string]any{"replicas": int64(4)}, 0},
		{"a DaemonSet is not divided", "apps/v1", "DaemonSet", map[string]any{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := events.KeyOf(tc.apiVersion, tc.kind, "default", "w")
			obj := map[string]any{"apiVersion": tc.apiVersion, "kind": tc.kind, "metadata": map[string]any{"name": "w", "namespace": "default"}, "spec": tc.spec}
			tpl := NewTemplate(events.ObjectRecord{Key: key, APIVersion: tc.apiVersion, Generation: 1}, obj)
			if got, _ := tpl.Workload(); got != tc.wantReplicas {
				t.Errorf("replicas %d, want %d", got, tc.wantReplicas)
			}
			if got := Build(tpl, nil, nil, nil).Replicas; got != tc.wantReplicas {
				t.Errorf("binding replicas %d, want %d", got, tc.wantReplicas)
			}
		})
	}
}
