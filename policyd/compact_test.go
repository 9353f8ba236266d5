package policyd

import (
	"encoding/json"
	"reflect"
	"testing"

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
	small.compact()
	if small.Object != nil {
		t.Fatal("compact must drop the decoded object")
	}
	if a, b := full.facts(), small.facts(); !reflect.DeepEqual(a, b) {
		t.Errorf("facts: %+v vs %+v", a, b)
	}
	r1, q1 := full.workload()
	r2, q2 := small.workload()
	if r1 != 5 || r1 != r2 || q1.Cpu().MilliValue() != 250 || !reflect.DeepEqual(q1, q2) {
		t.Errorf("workload: %d %v vs %d %v", r1, q1, r2, q2)
	}
	d1, d2 := full.dependencies(), small.dependencies()
	if len(d1) != 3 || !reflect.DeepEqual(d1, d2) {
		t.Errorf("dependencies: %v vs %v", d1, d2)
	}
	if a, b := BuildBinding(full, nil, nil), BuildBinding(small, nil, nil); !sameBinding(a, b) {
		t.Errorf("bindings differ:\n%+v\n%+v", a, b)
	}
}
