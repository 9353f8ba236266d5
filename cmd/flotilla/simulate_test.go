package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/simulate"
)

const examples = "../../examples"

// simOutput is the -o json contract.
type simOutput struct {
	Results []simResult `json:"results"`
}

type simResult struct {
	Resource struct {
		APIVersion, Kind, Namespace, Name string
	} `json:"resource"`
	Policy *struct {
		Kind, Namespace, Name string
	} `json:"policy"`
	Scheduled bool `json:"scheduled"`
	Clusters  []struct {
		Name     string `json:"name"`
		Replicas int32  `json:"replicas"`
	} `json:"clusters"`
	Feasible  []string                  `json:"feasible"`
	Diagnosis map[string][]string       `json:"diagnosis"`
	Error     string                    `json:"error"`
	Manifests map[string]map[string]any `json:"manifests"`
	Overrides map[string][]string       `json:"overrides"`
}

// runSimulate runs `flotilla simulate ARGS` in-process.
func runSimulate(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRoot()
	var out, errb bytes.Buffer
	root.SetArgs(append([]string{"simulate"}, args...))
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errb)
	err = root.Execute()
	return out.String(), errb.String(), err
}

func simulateJSON(t *testing.T, stdin string, args ...string) simOutput {
	t.Helper()
	out, stderr, err := runSimulate(t, stdin, append(args, "-o", "json")...)
	if err != nil {
		t.Fatalf("simulate: %v\nstderr:\n%s", err, stderr)
	}
	var o simOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("output is not JSON: %v\n%.2000s", err, out)
	}
	// Contract: empty arrays and objects, never null.
	var raw struct {
		Results []map[string]json.RawMessage `json:"results"`
	}
	_ = json.Unmarshal([]byte(out), &raw)
	for _, r := range raw.Results {
		for _, k := range []string{"clusters", "feasible", "diagnosis", "manifests", "overrides"} {
			if string(r[k]) == "null" || r[k] == nil {
				t.Errorf("%s is %s, want an empty array or object", k, r[k])
			}
		}
	}
	return o
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func clusterDocs(names ...string) string {
	var docs []string
	for _, n := range names {
		docs = append(docs, "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: "+n+"\nspec:\n  apiEndpoint: https://"+n+".example.com:6443\n")
	}
	return strings.Join(docs, "---\n")
}

func find(t *testing.T, o simOutput, kind, name string) simResult {
	t.Helper()
	for _, r := range o.Results {
		if r.Resource.Kind == kind && r.Resource.Name == name {
			return r
		}
	}
	t.Fatalf("no result for %s %s in %+v", kind, name, o.Results)
	return simResult{}
}

func placement(r simResult) map[string]int32 {
	m := map[string]int32{}
	for _, c := range r.Clusters {
		m[c.Name] = c.Replicas
	}
	return m
}

func image(t *testing.T, m map[string]any) string {
	t.Helper()
	spec, _ := m["spec"].(map[string]any)
	tpl, _ := spec["template"].(map[string]any)
	ps, _ := tpl["spec"].(map[string]any)
	cs, _ := ps["containers"].([]any)
	if len(cs) == 0 {
		t.Fatalf("manifest has no containers: %v", m)
	}
	img, _ := cs[0].(map[string]any)["image"].(string)
	return img
}

func seed000Args(t *testing.T, extraClusters ...string) []string {
	e := filepath.Join(examples, "seed000")
	clusters := writeFile(t, "clusters.yaml", clusterDocs(append([]string{"cluster1", "cluster2", "cluster3"}, extraClusters...)...))
	return []string{"-f", filepath.Join(e, "my-app.yaml"), "-f", filepath.Join(e, "propagation-policy.yaml"), "-f", filepath.Join(e, "override-policy.yaml"), "-f", clusters}
}

func TestSimulateSeed000(t *testing.T) {
	o := simulateJSON(t, "", seed000Args(t)...)
	if len(o.Results) != 2 || o.Results[0].Resource.Kind != "Deployment" || o.Results[1].Resource.Kind != "Service" {
		t.Fatalf("want my-app Deployment then Service, in input order: %+v", o.Results)
	}
	d := o.Results[0]
	if !d.Scheduled || d.Error != "" {
		t.Fatalf("my-app not scheduled: %q", d.Error)
	}
	if d.Policy == nil || d.Policy.Kind != "PropagationPolicy" || d.Policy.Namespace != "default" || d.Policy.Name != "my-app-policy" {
		t.Errorf("policy = %+v", d.Policy)
	}
	if got, want := placement(d), map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("placement = %v, want %v", got, want)
	}
	if d.Clusters[0].Name != "cluster1" || d.Clusters[2].Name != "cluster3" {
		t.Errorf("clusters not sorted by name: %+v", d.Clusters)
	}
	if !reflect.DeepEqual(d.Feasible, []string{"cluster1", "cluster2", "cluster3"}) || len(d.Diagnosis) != 0 {
		t.Errorf("feasible %v diagnosis %v", d.Feasible, d.Diagnosis)
	}
	for c, want := range map[string]string{
		"cluster1": "registry.beijing.example.com/nginx:1.25.3",
		"cluster2": "registry.shanghai.example.com/nginx:1.25.3",
		"cluster3": "nginx:1.25.3",
	} {
		m := d.Manifests[c]
		if got := image(t, m); got != want {
			t.Errorf("%s image = %q, want %q", c, got, want)
		}
		spec := m["spec"].(map[string]any)
		if got := spec["replicas"]; got != float64(placement(d)[c]) {
			t.Errorf("%s spec.replicas = %v, want %d", c, got, placement(d)[c])
		}
		md := m["metadata"].(map[string]any)
		for _, f := range []string{"uid", "resourceVersion", "managedFields", "creationTimestamp"} {
			if _, ok := md[f]; ok {
				t.Errorf("%s manifest has metadata.%s", c, f)
			}
		}
		if _, ok := m["status"]; ok {
			t.Errorf("%s manifest has status", c)
		}
		if ann, _ := md["annotations"].(map[string]any); ann["flotilla.io/applied-hash"] != nil {
			t.Errorf("%s manifest has the applied-hash annotation, which only executord adds", c)
		}
	}
	wantOverrides := map[string][]string{
		"cluster1": {"OverridePolicy/default/my-app-override"},
		"cluster2": {"OverridePolicy/default/my-app-override"},
		"cluster3": {},
	}
	if !reflect.DeepEqual(d.Overrides, wantOverrides) {
		t.Errorf("overrides = %v, want %v", d.Overrides, wantOverrides)
	}

	s := o.Results[1]
	if !s.Scheduled || s.Policy == nil || s.Policy.Name != "my-app-policy" {
		t.Fatalf("Service: %+v", s)
	}
	if got, want := placement(s), map[string]int32{"cluster1": 0, "cluster2": 0, "cluster3": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("Service placement = %v, want %v", got, want)
	}
	if len(s.Manifests) != 3 || s.Manifests["cluster2"]["kind"] != "Service" {
		t.Errorf("Service manifests: %v", s.Manifests)
	}
	if _, ok := s.Manifests["cluster1"]["spec"].(map[string]any)["replicas"]; ok {
		t.Errorf("a Service got spec.replicas")
	}
	if !reflect.DeepEqual(s.Overrides, map[string][]string{"cluster1": {}, "cluster2": {}, "cluster3": {}}) {
		t.Errorf("Service overrides = %v", s.Overrides)
	}
}

func TestSimulateSeed002(t *testing.T) {
	e := filepath.Join(examples, "seed002")
	azure := writeFile(t, "azure.yaml", clusterDocs("azure-staging"))
	o := simulateJSON(t, "", "-f", filepath.Join(e, "clusters.yaml"), "-f", azure, "-f", filepath.Join(e, "nginx-global.yaml"), "-f", filepath.Join(e, "storage-override.yaml"))
	if len(o.Results) != 1 {
		t.Fatalf("want only nginx-web (the credentials Secret is not a template): %+v", o.Results)
	}
	r := find(t, o, "Deployment", "nginx-web")
	if got, want := placement(r), map[string]int32{"aws-prod": 6, "azure-staging": 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("placement = %v, want %v (error %q)", got, want, r.Error)
	}
	if r.Policy == nil || r.Policy.Name != "nginx-global" {
		t.Errorf("policy = %+v", r.Policy)
	}
}

func TestSimulateSeed004Canary(t *testing.T) {
	e := filepath.Join(examples, "seed004")
	azure := writeFile(t, "azure.yaml", clusterDocs("azure-staging"))
	o := simulateJSON(t, "", "-f", filepath.Join(e, "cluster.yaml"), "-f", azure, "-f", filepath.Join(e, "canary-release.yaml"))
	r := find(t, o, "Deployment", "frontend")
	if got, want := placement(r), map[string]int32{"aws-prod": 8, "azure-staging": 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("placement = %v, want %v (error %q)", got, want, r.Error)
	}
}

func TestSimulateNoPolicy(t *testing.T) {
	cm := writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lonely, namespace: default}\ndata: {a: b}\n")
	o := simulateJSON(t, "", append(seed000Args(t), "-f", cm)...)
	r := find(t, o, "ConfigMap", "lonely")
	if r.Policy != nil || r.Scheduled || r.Error == "" {
		t.Fatalf("want policy null, unscheduled and an error: %+v", r)
	}
	if !strings.Contains(r.Error, "PropagationPolicy") {
		t.Errorf("error does not say no policy matches: %q", r.Error)
	}
	if len(r.Clusters) != 0 || len(r.Feasible) != 0 || len(r.Manifests) != 0 || len(r.Overrides) != 0 || len(r.Diagnosis) != 0 {
		t.Errorf("want empty clusters/feasible/maps: %+v", r)
	}
	if o.Results[2].Resource.Name != "lonely" {
		t.Errorf("results not in input order")
	}
}

func TestSimulateAffinityDiagnosis(t *testing.T) {
	o := simulateJSON(t, "", seed000Args(t, "cluster4")...)
	r := find(t, o, "Deployment", "my-app")
	reasons := r.Diagnosis["cluster4"]
	if len(reasons) == 0 || !strings.HasPrefix(reasons[0], "ClusterAffinity: ") {
		t.Fatalf("cluster4 diagnosis = %v, want a ClusterAffinity reason (all: %v)", reasons, r.Diagnosis)
	}
	if _, ok := r.Manifests["cluster4"]; ok || len(r.Diagnosis) != 1 {
		t.Errorf("cluster4 got a manifest or others were filtered: %v", r.Diagnosis)
	}
	if got, want := placement(r), map[string]int32{"cluster1": 3, "cluster2": 2, "cluster3": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("placement = %v, want %v", got, want)
	}
}

func TestSimulateGracefulEviction(t *testing.T) {
	rb := writeFile(t, "rb.yaml", `apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: my-app-deployment
  namespace: default
  annotations:
    propagationpolicy.karmada.io/name: my-app-policy
    propagationpolicy.karmada.io/namespace: default
  labels: {propagationpolicy.karmada.io/permanent-id: 7e3d4c2a-0000-4000-8000-000000000001}
  uid: 9a1c2b3d-0000-4000-8000-000000000002
  resourceVersion: "88"
  generation: 2
  ownerReferences:
  - {apiVersion: apps/v1, kind: Deployment, name: my-app, uid: 0b7a3c55-1c27-4a7e-9d3f-3d8c1d2b6e11, controller: true, blockOwnerDeletion: true}
  finalizers: [karmada.io/binding-controller]
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: my-app, uid: 0b7a3c55-1c27-4a7e-9d3f-3d8c1d2b6e11, resourceVersion: "1234"}
  replicas: 6
  replicaRequirements:
    resourceRequest: {cpu: 100m}
    namespace: default
  propagateDeps: true
  schedulerName: default-scheduler
  conflictResolution: Abort
  placement:
    clusterAffinity: {clusterNames: [cluster1, cluster2, cluster3]}
  failover:
    application:
      decisionConditions: {tolerationSeconds: 60}
      purgeMode: Gracefully
  requiredBy:
  - {namespace: default, name: other-binding, clusters: [{name: cluster1, replicas: 1}]}
  clusters:
  - {name: cluster1, replicas: 3}
  - {name: cluster2, replicas: 2}
  - {name: cluster3, replicas: 1}
  gracefulEvictionTasks:
  - fromCluster: cluster1
    producer: TaintManager
    reason: TaintUntolerated
    purgeMode: Gracefully
    creationTimestamp: "2025-06-01T00:00:00Z"
status:
  schedulerObservedGeneration: 2
  schedulerObservedAffinityName: ""
  lastScheduledTime: "2025-06-01T00:00:00Z"
  aggregatedStatus:
  - {clusterName: cluster1, applied: true, health: Healthy, status: {readyReplicas: 3}}
  conditions:
  - {type: Scheduled, status: "True", reason: Success, message: ok, lastTransitionTime: "2025-06-01T00:00:00Z"}
`)
	o := simulateJSON(t, "", append(seed000Args(t), "-f", rb)...)
	if len(o.Results) != 2 {
		t.Fatalf("the ResourceBinding must not be a template: %+v", o.Results)
	}
	r := find(t, o, "Deployment", "my-app")
	reasons := r.Diagnosis["cluster1"]
	if len(reasons) == 0 || !strings.HasPrefix(reasons[len(reasons)-1], "ClusterEviction: ") {
		t.Fatalf("cluster1 diagnosis = %v, want ClusterEviction (error %q)", reasons, r.Error)
	}
	if _, ok := placement(r)["cluster1"]; ok {
		t.Errorf("cluster1 still placed: %v", placement(r))
	}
}

func TestSimulateClusterStatus(t *testing.T) {
	clusters := writeFile(t, "clusters.yaml", `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: cluster1, labels: {region: beijing}}
spec:
  id: 5a4b0d0e-3b43-4c17-a6b4-9e0a4b2f2f01
  syncMode: Push
  apiEndpoint: https://10.0.0.1:6443
  secretRef: {namespace: karmada-cluster, name: cluster1}
  impersonatorSecretRef: {namespace: karmada-cluster, name: cluster1-impersonator}
  provider: aws
  region: cn-north-1
  zones: [cn-north-1a]
  resourceModels:
  - grade: 0
    ranges:
    - {name: cpu, min: "0", max: "1"}
status:
  kubernetesVersion: v1.31.0
  apiEnablements:
  - groupVersion: v1
    resources:
    - {name: services, kind: Service}
  - groupVersion: apps/v1
    resources:
    - {name: deployments, kind: Deployment}
  conditions:
  - {type: Ready, status: "True", reason: ClusterReady, message: cluster is healthy and ready to accept workloads, lastTransitionTime: "2025-06-01T00:00:00Z"}
  - {type: CompleteAPIEnablements, status: "True", reason: Complete, message: all, lastTransitionTime: "2025-06-01T00:00:00Z"}
  nodeSummary: {totalNum: 3, readyNum: 3}
  resourceSummary:
    allocatable: {cpu: "12", memory: 48Gi, pods: "330"}
    allocated: {cpu: "2", memory: 4Gi, pods: "20"}
    allocating: {}
    allocatableModelings:
    - {grade: 0, count: 3}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: cluster2}
spec: {}
status:
  conditions:
  - {type: Ready, status: "False", reason: ClusterNotReachable, message: down, lastTransitionTime: "2025-06-01T00:00:00Z"}
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: cluster3}
spec: {}
status:
  apiEnablements:
  - groupVersion: v1
    resources:
    - {name: services, kind: Service}
`)
	e := filepath.Join(examples, "seed000")
	o := simulateJSON(t, "", "-f", filepath.Join(e, "my-app.yaml"), "-f", filepath.Join(e, "propagation-policy.yaml"), "-f", clusters)
	r := find(t, o, "Deployment", "my-app")
	if got := r.Diagnosis["cluster2"]; len(got) == 0 || !strings.Contains(got[0], "TaintToleration: ") || !strings.Contains(got[0], "cluster.karmada.io/not-ready") {
		t.Errorf("cluster2 (Ready=False) diagnosis = %v", got)
	}
	if got := r.Diagnosis["cluster3"]; len(got) == 0 || !strings.HasPrefix(got[0], "APIEnablement: ") {
		t.Errorf("cluster3 (no apps/v1) diagnosis = %v", got)
	}
	if got, want := placement(r), map[string]int32{"cluster1": 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("placement = %v, want %v (error %q)", got, want, r.Error)
	}
	s := find(t, o, "Service", "my-app")
	if got, want := placement(s), map[string]int32{"cluster1": 0, "cluster3": 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("Service placement = %v, want %v", got, want)
	}
}

func TestSimulateInvalidInput(t *testing.T) {
	bad := writeFile(t, "bad.yaml", clusterDocs("cluster1")+`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  replica: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`)
	out, stderr, err := runSimulate(t, "", "-f", bad)
	var exit exitError
	if !errors.As(err, &exit) {
		t.Fatalf("want an exit error (exit 1), got %v; stdout %q", err, out)
	}
	for _, want := range []string{bad, "document 2", "spec.replica", `unknown field "replica"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not name %q:\n%s", want, stderr)
		}
	}
	if out != "" {
		t.Errorf("printed results for invalid input: %s", out)
	}
}

func TestSimulateFormats(t *testing.T) {
	args := seed000Args(t)
	out, _, err := runSimulate(t, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAMESPACE") {
		t.Fatalf("table:\n%s", out)
	}
	for _, col := range []string{"NAMESPACE", "NAME", "KIND", "POLICY", "SCHEDULED", "CLUSTERS", "ERROR"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("table header lacks %s: %q", col, lines[0])
		}
	}
	if f := strings.Fields(lines[1]); len(f) < 6 || f[1] != "my-app" || f[2] != "Deployment" || f[4] != "true" || f[5] != "cluster1:3,cluster2:2,cluster3:1" {
		t.Errorf("Deployment row: %q", lines[1])
	}

	yout, _, err := runSimulate(t, "", append(args, "-o", "yaml")...)
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML simOutput
	if err := yaml.Unmarshal([]byte(yout), &fromYAML); err != nil {
		t.Fatal(err)
	}
	fromJSON := simulateJSON(t, "", args...)
	if !reflect.DeepEqual(fromYAML, fromJSON) {
		t.Errorf("-o yaml and -o json differ")
	}

	// stdin, and a bad -o.
	all := ""
	for i := 1; i < len(args); i += 2 {
		b, err := os.ReadFile(args[i])
		if err != nil {
			t.Fatal(err)
		}
		all += "---\n" + string(b) + "\n"
	}
	fromStdin := simulateJSON(t, all, "-f", "-")
	if !reflect.DeepEqual(fromStdin, fromJSON) {
		t.Errorf("stdin input gives a different result")
	}
	if _, _, err := runSimulate(t, "", append(args, "-o", "xml")...); err == nil {
		t.Errorf("-o xml accepted")
	}
}

func TestSimulateUnschedulableExitsZero(t *testing.T) {
	e := filepath.Join(examples, "seed000")
	other := writeFile(t, "c.yaml", clusterDocs("elsewhere"))
	o := simulateJSON(t, "", "-f", filepath.Join(e, "my-app.yaml"), "-f", filepath.Join(e, "propagation-policy.yaml"), "-f", other)
	r := find(t, o, "Deployment", "my-app")
	if r.Scheduled || r.Error == "" || len(r.Clusters) != 0 || len(r.Diagnosis["elsewhere"]) == 0 {
		t.Errorf("want unschedulable with a diagnosis: %+v", r)
	}
}

// -o json prints exactly simulate.WriteJSON's encoding of the results: the
// encoding the scheduler's golden scenarios hold
// (schedulerd/core/testdata/scenarios), so that those stand for the CLI's
// output too.
func TestSimulateJSONIsTheLibraryEncoding(t *testing.T) {
	args := seed000Args(t)
	got, stderr, err := runSimulate(t, "", append(args, "-o", "json")...)
	if err != nil {
		t.Fatalf("simulate: %v\nstderr:\n%s", err, stderr)
	}
	var files []string
	for i := 1; i < len(args); i += 2 {
		files = append(files, args[i])
	}
	res := simulate.Load(files, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("load: %v", res.Errors)
	}
	rep, err := simulate.Run(res.Docs)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := simulate.WriteJSON(&want, rep.Results); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.String(), got); diff != "" {
		t.Errorf("-o json (-library +cli):\n%s", diff)
	}
}

// TestSimulateReadsSubdirectoriesWithR: simulate takes apply's -R, so a
// tree of manifests simulates as it applies; without -R the
// subdirectories are not read.
func TestSimulateReadsSubdirectoriesWithR(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "app")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	e := filepath.Join(examples, "seed000")
	for _, f := range []string{"my-app.yaml", "propagation-policy.yaml"} {
		data, err := os.ReadFile(filepath.Join(e, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "clusters.yaml"), []byte(clusterDocs("cluster1", "cluster2", "cluster3")), 0o600); err != nil {
		t.Fatal(err)
	}
	o := simulateJSON(t, "", "-f", root, "-R")
	if len(o.Results) != 2 || !o.Results[0].Scheduled {
		t.Fatalf("simulate -f DIR -R: want my-app's Deployment and Service from the subdirectory, scheduled: %+v", o.Results)
	}
	if o, _, err := runSimulate(t, "", "-f", root, "-o", "json"); err == nil && strings.Contains(o, "my-app") {
		t.Errorf("simulate -f DIR without -R read the subdirectory:\n%.500s", o)
	}
}
