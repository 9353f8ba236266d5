package policyd

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/policyd/binding"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// policyd compacts an applied template from the object validation returned
// (not decoding the stored JSON again); that must give what decoding the
// stored record gives, which is how a restarted policyd builds it.
func TestATemplateFromTheValidatedObjectEqualsOneFromItsStoredRecord(t *testing.T) {
	docs := []string{
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u-1","labels":{"app":"web"}},
		  "spec":{"replicas":5,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"serviceAccountName":"runner",
		  "imagePullSecrets":[{"name":"pull"}],"volumes":[{"name":"c","configMap":{"name":"settings"}},{"name":"d","persistentVolumeClaim":{"claimName":"data"}},
		  {"name":"p","projected":{"sources":[{"secret":{"name":"proj"}}]}}],
		  "containers":[{"name":"a","image":"nginx","envFrom":[{"secretRef":{"name":"creds"}}],"env":[{"name":"X","valueFrom":{"configMapKeyRef":{"name":"envcm","key":"k"}}}],
		  "resources":{"requests":{"cpu":2,"memory":"64Mi","nvidia.com/gpu":1}}},{"name":"b","image":"busybox","resources":{"limits":{"cpu":"500m"}}}]}}}}`,
		`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"once"},"spec":{"parallelism":3,"template":{"spec":{"restartPolicy":"Never",
		  "containers":[{"name":"a","image":"busybox","resources":{"requests":{"cpu":"0.5"}}}]}}}}`,
		`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"data"},"spec":{"serviceName":"db","selector":{"matchLabels":{"app":"db"}},
		  "template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[{"name":"db","image":"postgres"}]}}}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","namespace":"shop","labels":{"tier":"conf"}},"data":{"a":"1"}}`,
	}
	for _, d := range docs {
		var raw map[string]any
		if err := json.Unmarshal([]byte(d), &raw); err != nil {
			t.Fatal(err)
		}
		doc, errs, _ := validation.ValidateObject(raw)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", d, errs)
		}
		stored, err := events.MarshalJSON(doc.Object)
		if err != nil {
			t.Fatal(err)
		}
		rec := events.ObjectRecord{Key: events.KeyOf(doc.APIVersion, doc.Kind, doc.Namespace, doc.Name), APIVersion: doc.APIVersion, Object: stored, Generation: 1, Role: events.RoleTemplate}
		direct, restarted := newState(), newState()
		if err := direct.putTemplate(rec, doc.Object); err != nil {
			t.Fatal(err)
		}
		if err := restarted.put(rec); err != nil {
			t.Fatal(err)
		}
		a, b := direct.templates[rec.Key], restarted.templates[rec.Key]
		ra, qa := a.Workload()
		rb, qb := b.Workload()
		if a.UID != b.UID || !reflect.DeepEqual(a.Facts(), b.Facts()) || ra != rb || !reflect.DeepEqual(qa, qb) || !reflect.DeepEqual(a.Dependencies(), b.Dependencies()) {
			t.Errorf("%s %s: from the validated object uid %q %+v %d %v %v; from the stored record uid %q %+v %d %v %v",
				doc.Kind, doc.Name, a.UID, a.Facts(), ra, qa, a.Dependencies(), b.UID, b.Facts(), rb, qb, b.Dependencies())
		}
		if doc.Kind == "Deployment" && (len(a.Dependencies()) != 7 || qa.Cpu().MilliValue() != 2500 || ra != 5 || a.UID != "u-1") {
			t.Errorf("the Deployment must exercise dependencies, summed requests and its uid: %v %v %d %q", a.Dependencies(), qa, ra, a.UID)
		}
		if ba, bb := binding.Build(a, nil, nil, nil), binding.Build(b, nil, nil, nil); !sameBinding(ba, bb) {
			t.Errorf("%s: bindings differ", doc.Kind)
		}
	}
}
