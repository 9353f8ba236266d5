package simulate

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

const examples = "../examples"

func mustLoad(t *testing.T, src string) []validation.Document {
	t.Helper()
	res := validation.Load([]string{"-"}, strings.NewReader(src))
	if len(res.Errors) > 0 {
		t.Fatalf("invalid test input: %s", validation.Format(res.Errors[0]))
	}
	return res.Docs
}

func mustRun(t *testing.T, src string) *Report {
	t.Helper()
	rep, err := Run(mustLoad(t, src))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func placementOf(r Result) map[string]int32 {
	m := map[string]int32{}
	for _, c := range r.Clusters {
		m[c.Name] = c.Replicas
	}
	return m
}

const dynamicInput = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 12
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx
        resources: {requests: {cpu: "1", memory: 1Gi, nvidia.com/gpu: "1"}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: a}
spec: {}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: b}
spec: {}
`

// A cluster without status has unbounded capacity: it can take the desired
// count, whatever the requests (even a resource no cluster reports).
func TestUnboundedCapacity(t *testing.T) {
	r := mustRun(t, dynamicInput).Results[0]
	if got, want := placementOf(r), map[string]int32{"a": 6, "b": 6}; !reflect.DeepEqual(got, want) {
		t.Fatalf("placement = %v, want %v (error %q)", got, want, r.Error)
	}
	// A third cluster with figures for 3 replicas gets its share of
	// 12+12+3: Karmada's dynamic weights divide by available replicas.
	withFigures := dynamicInput + `---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: c}
spec: {}
status:
  resourceSummary:
    allocatable: {cpu: "3", memory: 30Gi, pods: "100", nvidia.com/gpu: "8"}
`
	r = mustRun(t, withFigures).Results[0]
	got := placementOf(r)
	if got["a"]+got["b"]+got["c"] != 12 || got["c"] == 0 || got["c"] > 3 || got["a"] < 4 {
		t.Fatalf("placement = %v (error %q)", got, r.Error)
	}
}

func TestReadyConditions(t *testing.T) {
	src := strings.Replace(dynamicInput, "metadata: {name: b}\nspec: {}\n", `metadata: {name: b}
spec: {}
status:
  conditions:
  - {type: Ready, status: Unknown, reason: ClusterUnreachable, message: "", lastTransitionTime: "2025-01-01T00:00:00Z"}
`, 1)
	r := mustRun(t, src).Results[0]
	if got := r.Diagnosis["b"]; len(got) != 1 || !strings.Contains(got[0], "cluster.karmada.io/unreachable:NoSchedule") {
		t.Fatalf("diagnosis of b = %v", got)
	}
	if got, want := placementOf(r), map[string]int32{"a": 12}; !reflect.DeepEqual(got, want) {
		t.Fatalf("placement = %v, want %v", got, want)
	}
}

// A fresh reschedule and the current result come from a ResourceBinding.
func TestResourceBindingPrevious(t *testing.T) {
	src := dynamicInput + `---
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: web-deployment, namespace: default}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: web, uid: 11111111-2222-3333-4444-555555555555}
  clusters: [{name: a, replicas: 10}, {name: b, replicas: 2}]
`
	// Dynamic weights keep the current division when the replica count
	// did not change (Karmada's scale rules).
	r := mustRun(t, src).Results[0]
	if got, want := placementOf(r), map[string]int32{"a": 10, "b": 2}; !reflect.DeepEqual(got, want) {
		t.Fatalf("placement = %v, want the current %v (error %q)", got, want, r.Error)
	}
	fresh := src + `  rescheduleTriggeredAt: "2025-06-02T00:00:00Z"
status:
  lastScheduledTime: "2025-06-01T00:00:00Z"
`
	// A fresh reschedule divides from scratch by available replicas, which
	// count what the binding runs there now: a 12+10, b 12+2 -> 7:5.
	r = mustRun(t, fresh).Results[0]
	if got, want := placementOf(r), map[string]int32{"a": 7, "b": 5}; !reflect.DeepEqual(got, want) {
		t.Fatalf("fresh placement = %v, want %v (error %q)", got, want, r.Error)
	}
}

func TestBindingWithoutTemplateWarns(t *testing.T) {
	rep := mustRun(t, dynamicInput+`---
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: gone, namespace: default}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: gone}
`)
	if len(rep.Results) != 1 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "not in the input") {
		t.Fatalf("results %d warnings %v", len(rep.Results), rep.Warnings)
	}
}

// The template uid feeds the Webster tie-break: absent, it is policyd's
// deterministic one.
func TestTemplateUID(t *testing.T) {
	w, err := newWorld(mustLoad(t, dynamicInput))
	if err != nil {
		t.Fatal(err)
	}
	key := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}
	if got, want := w.templates[0].tmpl.UID, events.DeterministicID("template-uid", key.String()); got != want {
		t.Fatalf("uid = %s, want %s", got, want)
	}
}

func TestWorkersDoNotChangeTheResult(t *testing.T) {
	docs := validation.Load([]string{benchInput(t, 300, 30)}, nil).Docs
	one, err := RunWith(docs, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	many, _ := RunWith(docs, Options{Workers: 7})
	var a, b bytes.Buffer
	_ = WriteJSON(&a, one.Results)
	_ = WriteJSON(&b, many.Results)
	if a.String() != b.String() {
		t.Fatal("the number of workers changed the output")
	}
}
