package mirror

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIntentLaysOtherWritersFieldsOverTheAppliedFile(t *testing.T) {
	live := `{"apiVersion":"apps/v1","kind":"Deployment",
 "metadata":{"name":"web","namespace":"default","generation":4,
  "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":{\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1.25\"},{\"name\":\"sidecar\",\"image\":\"envoy:1\"}]}}}}"},
  "managedFields":[
   {"manager":"kubectl-client-side-apply","operation":"Update","fieldsV1":{"f:spec":{"f:replicas":{},"f:revisionHistoryLimit":{}}}},
   {"manager":"kubectl-set","operation":"Update","fieldsV1":{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}}},
   {"manager":"flotilla-hubd","operation":"Apply","subresource":"status","fieldsV1":{"f:status":{"f:replicas":{}}}}]},
 "spec":{"replicas":2,"revisionHistoryLimit":10,"template":{"spec":{"containers":[
  {"name":"web","image":"nginx:1.27","imagePullPolicy":"IfNotPresent"},{"name":"sidecar","image":"envoy:1","imagePullPolicy":"IfNotPresent"}]}}},
 "status":{"replicas":2}}`
	want := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},
 "spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"},{"name":"sidecar","image":"envoy:1"}]}}}}`
	var obj, wantObj map[string]any
	if err := json.Unmarshal([]byte(live), &obj); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &wantObj); err != nil {
		t.Fatal(err)
	}
	got, skip := Input(obj, WatchedNamespaces(nil), nil)
	if skip != "" {
		t.Fatalf("skipped: %s", skip)
	}
	if diff := cmp.Diff(wantObj, roundTrip(t, got)); diff != "" {
		t.Errorf("kubectl set image over kubectl apply (-want +got):\n%s", diff)
	}
}
