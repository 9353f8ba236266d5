package validation

import (
	"encoding/json"
	"github.com/flotilla-io/flotilla/events/policy"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// want describes one expected problem; an empty reason matches any reason.
type want struct {
	doc    int
	line   int
	field  string
	reason string // a substring of the reason
}

func matches(p Problem, w want) bool {
	return p.Document == w.doc && p.Line == w.line && p.Field == w.field && strings.Contains(p.Reason, w.reason)
}

// checkProblems compares problems with wanted ones, in order.
func checkProblems(t *testing.T, kind string, got []Problem, wants []want) {
	t.Helper()
	ok := len(got) == len(wants)
	for i := 0; ok && i < len(got); i++ {
		ok = matches(got[i], wants[i])
	}
	if !ok {
		var b strings.Builder
		for _, p := range got {
			b.WriteString("\n  " + Format(p))
		}
		t.Errorf("%s: want %+v, got:%s", kind, wants, b.String())
	}
}

func loadString(src string) Result {
	return Load([]string{"-"}, strings.NewReader(src))
}

const policyHead = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: p
  namespace: default
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    name: web
`

func TestLoadReportsProblems(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		errs  []want
		warns []want
	}{
		{
			name: "an unknown field deep in a policy names its path and its line",
			src: policyHead + `  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      weightPreference:
        staticWeightList:
        - targetCluster:
            clusterNamez: [a]
          weight: 1
`,
			errs: []want{{1, 17, "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster.clusterNamez", `unknown field "clusterNamez" (did you mean "clusterNames"?)`}},
		},
		{
			name: "a string where an integer belongs names its path and its line",
			src: policyHead + `  placement:
    spreadConstraints:
    - spreadByField: cluster
      maxGroups: "2"
`,
			errs: []want{{1, 14, "spec.placement.spreadConstraints[0].maxGroups", `invalid type: expected integer, got string "2"`}},
		},
		{
			name: "a misspelt replica scheduling type is an unsupported value",
			src: policyHead + `  placement:
    replicaScheduling:
      replicaSchedulingType: Dividd
`,
			errs: []want{{1, 13, "spec.placement.replicaScheduling.replicaSchedulingType", `unsupported value "Dividd": must be one of Duplicated, Divided`}},
		},
		{
			name: "a label selector with an unknown operator is an error",
			src: `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata:
  name: p
spec:
  resourceSelectors:
  - apiVersion: apps/v1
    kind: Deployment
    labelSelector:
      matchExpressions:
      - key: app
        operator: Within
        values: [web]
`,
			errs: []want{{1, 12, "spec.resourceSelectors[0].labelSelector.matchExpressions[0].operator", `unsupported value "Within"`}},
		},
		{
			name: "a Deployment with spec.replica is an error at spec.replica",
			src: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replica: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
`,
			errs: []want{{1, 6, "spec.replica", `unknown field "replica" (did you mean "replicas"?)`}},
		},
		{
			name: "field names are case-sensitive, as the API server's strict decoding is",
			src: `apiVersion: v1
kind: ConfigMap
metadata:
  Name: c
`,
			errs: []want{
				{1, 3, "metadata.name", "required value"},
				{1, 4, "metadata.Name", `unknown field "Name" (did you mean "name"?)`},
			},
		},
		{
			name: "documents are counted from 1 and empty documents are not counted",
			src: `---
# only a comment
---
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
data: {k: 1}
`,
			errs: []want{{2, 12, "data[k]", "invalid type: expected string, got integer 1"}},
		},
		{
			name: "apiVersion, kind and metadata.name are required",
			src:  "metadata: {}\nspec: {}\n",
			errs: []want{
				{1, 1, "apiVersion", "required value"},
				{1, 1, "kind", "required value"},
				{1, 1, "metadata.name", "required value"},
			},
		},
		{
			name: "a YAML syntax error names its line and later documents still load",
			src: `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
	labels: {}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, labels: {x: 1}}
`,
			errs: []want{
				{1, 4, "", "YAML syntax error: found a tab character"},
				{2, 9, "metadata.labels[x]", "expected string"},
			},
		},
		{
			name: "a document that is not an object is an error",
			src:  "- a\n- b\n",
			errs: []want{{1, 1, "", "a document must be an object, got list"}},
		},
		{
			name: "a misspelt built-in kind is refused with a suggestion",
			src:  "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: x}\n",
			errs: []want{{1, 2, "kind", `(did you mean "Deployment"?)`}},
		},
		{
			name: "an unknown API group is a custom resource and needs only apiVersion, kind and name",
			src:  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {anything: [1, 2]}\n",
		},
		{
			name: "a Karmada kind Flotilla does not support is refused",
			src:  "apiVersion: policy.karmada.io/v1alpha1\nkind: ResourceInterpreterWebhookConfiguration\nmetadata: {name: q}\n",
			errs: []want{{1, 2, "kind", `unsupported value "ResourceInterpreterWebhookConfiguration"`}},
		},
		{
			name: "a bad quantity is reported at its path",
			src: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: nginx
    resources:
      limits: {cpu: lots}
`,
			errs: []want{{1, 9, "spec.containers[0].resources.limits[cpu]", "invalid value"}},
		},
		{
			name: "Secret data must be base64",
			src:  "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  key: not base64!\n",
			errs: []want{{1, 5, "data[key]", "not valid base64"}},
		},
		{
			name: "the status of a built-in kind is not checked",
			src:  "apiVersion: v1\nkind: Service\nmetadata: {name: d}\nstatus: {whatever: true}\n",
		},
		{
			name: "a duplicate field is an error",
			src:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: a, k: b}\n",
			errs: []want{{1, 4, "data.k", `duplicate field "k"`}},
		},
		{
			name: "an alias that contains itself is an error, not a hang",
			src:  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: &d {k: *d}\n",
			errs: []want{{1, 4, "data.k", "refers to a value that contains it"}},
		},
		{
			name: "clusterAffinity and clusterAffinities are exclusive",
			src: policyHead + `  placement:
    clusterAffinity: {clusterNames: [a]}
    clusterAffinities:
    - affinityName: primary
      clusterNames: [a]
`,
			errs: []want{{1, 13, "spec.placement.clusterAffinities", "may not be set together with clusterAffinity"}},
		},
		{
			name: "spread constraints: field and label are exclusive and maxGroups is at least minGroups",
			src: policyHead + `  placement:
    spreadConstraints:
    - spreadByField: cluster
      spreadByLabel: tier
      maxGroups: 1
      minGroups: 2
`,
			errs: []want{
				{1, 14, "spec.placement.spreadConstraints[0].spreadByLabel", "may not be set together with spreadByField"},
				{1, 15, "spec.placement.spreadConstraints[0].maxGroups", "must be greater than or equal to minGroups (2)"},
			},
		},
		{
			name: "a static weight below 1 is an error",
			src: policyHead + `  placement:
    replicaScheduling:
      weightPreference:
        staticWeightList:
        - targetCluster: {clusterNames: [a]}
          weight: 0
`,
			errs: []want{{1, 16, "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight", "must be greater than or equal to 1"}},
		},
		{
			name: "field selector keys and operators Karmada's webhook refuses are warnings",
			src: policyHead + `  placement:
    clusterAffinity:
      fieldSelector:
        matchExpressions:
        - key: country
          operator: Exists
`,
			warns: []want{
				{1, 15, "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key", "not a cluster field"},
				{1, 16, "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].operator", "only In and NotIn"},
			},
		},
		{
			name: "a cluster toleration with an unknown operator is an error",
			src: policyHead + `  placement:
    clusterTolerations:
    - key: k
      operator: Equals
`,
			errs: []want{{1, 14, "spec.placement.clusterTolerations[0].operator", `unsupported value "Equals"`}},
		},
		{
			name: "a bad failure-detection rule names its field path",
			src: policyHead + `  placement:
    failover:
      applicationFailureDetection:
      - rule: "PodUnavailable > 30"
  failover:
    cluster:
      purgeMode: Immediately
    clusterFailureDetection:
    - rule: "API-Server-Timeout < 3min"
`,
			errs: []want{
				{1, 14, "spec.placement.failover.applicationFailureDetection[0].rule", "PodUnavailable takes a percentage"},
				{1, 19, "spec.failover.clusterFailureDetection[0].rule", `unsupported operator "<"`},
			},
			warns: []want{
				{1, 12, "spec.placement.failover", "merged into it"},
				{1, 17, "spec.failover.cluster.purgeMode", `old Karmada spelling "Immediately"`},
			},
		},
		{
			name: "overriders: operators, image components and exactly one of json or yaml",
			src: `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: o}
spec:
  overrideRules:
  - overriders:
      imageOverrider:
      - component: Host
        operator: replace
        value: x
      commandOverrider:
      - containerName: c
        operator: replace
        value: [a]
      fieldOverrider:
      - fieldPath: /data/config
        json: [{subPath: /a, operator: remove}]
        yaml: [{subPath: /a, operator: remove}]
      plaintext:
      - path: spec/replicas
        operator: add
`,
			errs: []want{
				{1, 8, "spec.overrideRules[0].overriders.imageOverrider[0].component", `unsupported value "Host": must be one of Registry, Repository, Tag`},
				{1, 13, "spec.overrideRules[0].overriders.commandOverrider[0].operator", `unsupported value "replace": must be one of add, remove`},
				{1, 18, "spec.overrideRules[0].overriders.fieldOverrider[0].yaml", "may not be set together with json"},
				{1, 20, "spec.overrideRules[0].overriders.plaintext[0].path", "must be a JSON pointer"},
			},
			warns: []want{{1, 20, "spec.overrideRules[0].overriders.plaintext[0].value", "operator add needs a value"}},
		},
		{
			name: "a JSON pointer with an escape RFC 6901 does not define is refused",
			src: `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: o, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - overriders:
      plaintext:
      - {path: /metadata/annotations/a~1b, operator: add, value: x}
      - {path: /spec/template/spec/containers/~2, operator: remove}
`,
			errs: []want{{1, 10, "spec.overrideRules[0].overriders.plaintext[1].path", `invalid value "/spec/template/spec/containers/~2": ~ at offset 31 must be followed by 0 (for ~) or 1 (for /) (RFC 6901)`}},
		},
		{
			name: "a Cluster with a bad sync mode and taint effect is refused",
			src: `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: c}
spec:
  syncMode: Pushed
  apiEndpoint: not a url
  taints:
  - key: k
    effect: NoRun
`,
			errs: []want{
				{1, 5, "spec.syncMode", `unsupported value "Pushed": must be one of Push, Pull`},
				{1, 6, "spec.apiEndpoint", "must be an http or https URL"},
				{1, 9, "spec.taints[0].effect", `unsupported value "NoRun"`},
			},
		},
		{
			name: "a ResourceBinding is read leniently below its known fields",
			src: `apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: web-deployment, namespace: default}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, name: web, resourceVersion: "12"}
  replicas: 3
  placement: {clusterAffinity: {clusterNames: [a]}}
  clusters:
  - {name: a, replicas: 3}
  rescheduleTriggeredAt: "2025-01-01T00:00:00Z"
  gracefulEvictionTasks:
  - {fromCluster: b, producer: x, reason: y}
status:
  lastScheduledTime: "2025-01-01T00:00:00Z"
  conditions: []
bogus: 1
`,
			errs: []want{{1, 16, "bogus", `unknown field "bogus"`}},
		},
		{
			name: "a ResourceBinding's target clusters are checked strictly",
			src: `apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: b}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, name: web}
  clusters:
  - {name: a, replica: 3}
`,
			errs: []want{{1, 7, "spec.clusters[0].replica", `unknown field "replica"`}},
		},
		{
			name: "a Cluster's status is read strictly: condition statuses and quantities a simulation would use",
			src: `apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: c}
spec: {syncMode: Push, apiEndpoint: "https://10.0.0.1"}
status:
  conditions:
  - {type: Ready, status: Maybe, reason: r, message: m, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: "", status: "True", reason: r, message: m, lastTransitionTime: "2026-01-01T00:00:00Z"}
  resourceSummary:
    allocatable: {cpu: "4", memory: -5Gi}
    allocated: {pods: "-1"}
`,
			errs: []want{
				{1, 7, "status.conditions[0].status", `unsupported value "Maybe": must be one of True, False, Unknown`},
				{1, 8, "status.conditions[1].type", "required value"},
				{1, 10, "status.resourceSummary.allocatable[memory]", `invalid value "-5Gi": must not be negative`},
				{1, 11, "status.resourceSummary.allocated[pods]", `invalid value "-1": must not be negative`},
			},
		},
		{
			name: "a ResourceBinding names each target cluster once, and a bad time says the format",
			src: `apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata: {name: b}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, name: web}
  clusters:
  - {name: a, replicas: 1}
  - {name: a, replicas: 2}
  rescheduleTriggeredAt: not-a-time
`,
			errs: []want{
				{1, 8, "spec.clusters[1].name", `duplicate value "a": spec.clusters[0] names it already`},
				{1, 9, "spec.rescheduleTriggeredAt", `invalid value "not-a-time": must be an RFC 3339 time such as 2026-01-02T15:04:05Z`},
			},
		},
		{
			name: "a policy without resource selectors is refused",
			src:  "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p}\nspec:\n  placement: {}\n",
			errs: []want{{1, 4, "spec.resourceSelectors", "at least one resource selector"}},
		},
		{
			name:  "a selector in another namespace than its policy is a warning",
			src:   strings.Replace(policyHead, "    name: web\n", "    name: web\n    namespace: other\n", 1),
			warns: []want{{1, 11, "spec.resourceSelectors[0].namespace", `differs from the policy's namespace "default"`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := loadString(tt.src)
			checkProblems(t, "errors", res.Errors, tt.errs)
			checkProblems(t, "warnings", res.Warnings, tt.warns)
		})
	}
}

// examplesDir is the repository's examples/ folder.
func examplesDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEveryExampleLoadsWithoutErrors(t *testing.T) {
	dir := examplesDir(t)
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && hasManifestExt(p) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example files found")
	}
	var warnings []Problem
	for _, f := range files {
		res := Load([]string{f}, nil)
		for _, p := range res.Errors {
			t.Errorf("%s", Format(p))
		}
		if len(res.Docs) == 0 {
			t.Errorf("%s: no documents", f)
		}
		warnings = append(warnings, res.Warnings...)
	}
	// The seed spellings Flotilla accepts, each with its warning.
	expected := []struct{ file, field, reason string }{
		{"seed000/propagation-policy.yaml", "spec.placement.replicaScheduling.weightPreference.staticClusterWeight", "alias"},
		{"seed000/failover-policy.yaml", "spec.failover.application.purgeMode", `"Graciously"`},
		{"seed000/failover-policy.yaml", "spec.failover.application", "propagateDeps"},
		{"seed002/failover-policy.yaml", "spec.placement.failover", "merged"},
		{"seed004/tuning.yaml", "spec.placement.spreadConstraints[0].spreadByField", "without a spreadByField cluster constraint"},
	}
	for _, e := range expected {
		found := false
		for _, w := range warnings {
			found = found || (strings.HasSuffix(w.File, e.file) && w.Field == e.field && strings.Contains(w.Reason, e.reason))
		}
		if !found {
			t.Errorf("no warning %q at %s in %s", e.reason, e.field, e.file)
		}
	}
	if len(warnings) != len(expected) {
		for _, w := range warnings {
			t.Log(Format(w))
		}
		t.Errorf("want %d warnings, got %d", len(expected), len(warnings))
	}
}

func TestExamplesGetDefaultsAndNormalisedSpellings(t *testing.T) {
	dir := examplesDir(t)
	res := Load([]string{filepath.Join(dir, "seed000"), filepath.Join(dir, "seed002"), filepath.Join(dir, "seed004")}, nil)
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	byName := map[string]Document{}
	for _, d := range res.Docs {
		byName[d.Kind+"/"+d.Name] = d
	}
	tests := []struct {
		name string
		doc  string
		path []string
		want any
	}{
		{"staticClusterWeight becomes staticWeightList", "PropagationPolicy/my-app-policy",
			[]string{"spec", "placement", "replicaScheduling", "weightPreference", "staticWeightList"}, 3},
		{"Graciously reads as Gracefully", "PropagationPolicy/failover-policy",
			[]string{"spec", "failover", "application", "purgeMode"}, "Gracefully"},
		{"failover under placement moves to spec.failover", "PropagationPolicy/nginx-failover",
			[]string{"spec", "failover", "clusterFailureDetection"}, 1},
		{"region spread gets minGroups 1", "PropagationPolicy/region-sensitive",
			[]string{"spec", "placement", "spreadConstraints", "0", "minGroups"}, int64(1)},
		{"resource selectors get the policy's namespace", "PropagationPolicy/canary-release",
			[]string{"spec", "resourceSelectors", "0", "namespace"}, "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := byName[tt.doc]
			if !ok {
				t.Fatalf("no document %s", tt.doc)
			}
			got := dig(d.Object, tt.path...)
			if n, ok := tt.want.(int); ok {
				list, _ := got.([]any)
				if len(list) != n {
					t.Errorf("want a list of %d, got %#v", n, got)
				}
				return
			}
			if !reflect.DeepEqual(tt.want, got) {
				t.Errorf("want %#v, got %#v", tt.want, got)
			}
		})
	}
	if got := dig(byName["PropagationPolicy/nginx-failover"].Object, "spec", "placement", "failover"); got != nil {
		t.Errorf("spec.placement.failover still there: %v", got)
	}
}

// dig follows keys and list indices through plain values.
func dig(x any, path ...string) any {
	for _, p := range path {
		switch t := x.(type) {
		case map[string]any:
			x = t[p]
		case []any:
			i := 0
			for _, c := range p {
				i = i*10 + int(c-'0')
			}
			if i >= len(t) {
				return nil
			}
			x = t[i]
		default:
			return nil
		}
	}
	return x
}

func TestDefaultsApplied(t *testing.T) {
	tests := []struct {
		name string
		src  string
		path []string
		want any
	}{
		{"a namespaced object without namespace goes to default",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", []string{"metadata", "namespace"}, "default"},
		{"a cluster-scoped object gets no namespace",
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n", []string{"metadata", "namespace"}, nil},
		{"Divided without a preference means Weighted",
			policyHead + "  placement:\n    replicaScheduling: {replicaSchedulingType: Divided}\n",
			[]string{"spec", "placement", "replicaScheduling", "replicaDivisionPreference"}, "Weighted"},
		{"replicaScheduling without a type means Divided",
			policyHead + "  placement:\n    replicaScheduling: {}\n",
			[]string{"spec", "placement", "replicaScheduling", "replicaSchedulingType"}, "Divided"},
		{"Duplicated gets no division preference",
			policyHead + "  placement:\n    replicaScheduling: {replicaSchedulingType: Duplicated}\n",
			[]string{"spec", "placement", "replicaScheduling", "replicaDivisionPreference"}, nil},
		{"a spread constraint with neither field nor label spreads by cluster",
			policyHead + "  placement:\n    spreadConstraints: [{maxGroups: 2}]\n",
			[]string{"spec", "placement", "spreadConstraints", "0", "spreadByField"}, "cluster"},
		{"minGroups 0 becomes 1",
			policyHead + "  placement:\n    spreadConstraints: [{spreadByField: cluster, maxGroups: 2}]\n",
			[]string{"spec", "placement", "spreadConstraints", "0", "minGroups"}, int64(1)},
		{"graceful application failover gets a 600 s grace period",
			policyHead + "  propagateDeps: true\n  failover:\n    application: {purgeMode: Gracefully}\n",
			[]string{"spec", "failover", "application", "gracePeriodSeconds"}, int64(600)},
		{"application failover without a purge mode is graceful",
			policyHead + "  propagateDeps: true\n  failover:\n    application: {}\n",
			[]string{"spec", "failover", "application", "purgeMode"}, "Gracefully"},
		{"a policy's empty selector namespace is the policy's",
			strings.Replace(policyHead, "namespace: default", "namespace: shop", 1),
			[]string{"spec", "resourceSelectors", "0", "namespace"}, "shop"},
		{"a policy without namespace and its selectors go to default",
			strings.Replace(policyHead, "  namespace: default\n", "", 1),
			[]string{"spec", "resourceSelectors", "0", "namespace"}, "default"},
		{"a cluster-wide policy's selectors keep an empty namespace",
			strings.Replace(strings.Replace(policyHead, "kind: PropagationPolicy", "kind: ClusterPropagationPolicy", 1), "  namespace: default\n", "", 1),
			[]string{"spec", "resourceSelectors", "0", "namespace"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := loadString(tt.src)
			if len(res.Errors) > 0 || len(res.Docs) != 1 {
				t.Fatalf("errors %v, %d documents", res.Errors, len(res.Docs))
			}
			if got := dig(res.Docs[0].Object, tt.path...); !reflect.DeepEqual(tt.want, got) {
				t.Errorf("want %#v, got %#v", tt.want, got)
			}
		})
	}
}

func TestLoadReadsDirectoriesFilesAndStdin(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cm := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n" }
	write("b.yaml", cm("b1")+"---\n"+cm("b2"))
	write("a.yml", cm("a"))
	write("c.json", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}`)
	write("notes.txt", "not a manifest")
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o700); err != nil {
		t.Fatal(err)
	}
	write("sub.yaml/deeper.yaml", cm("deeper"))

	res := Load([]string{dir, "-", filepath.Join(dir, "missing.yaml")}, strings.NewReader(cm("stdin")))
	var got []string
	for _, d := range res.Docs {
		got = append(got, filepath.Base(d.File)+"#"+string(rune('0'+d.Index))+"="+d.Name)
	}
	wantDocs := []string{"a.yml#1=a", "b.yaml#1=b1", "b.yaml#2=b2", "c.json#1=c", "-#1=stdin"}
	if !reflect.DeepEqual(wantDocs, got) {
		t.Errorf("want %v, got %v", wantDocs, got)
	}
	if len(res.Errors) != 1 || !strings.HasSuffix(res.Errors[0].File, "missing.yaml") || res.Errors[0].Reason != "no such file or directory" {
		t.Errorf("want one error for missing.yaml, got %v", res.Errors)
	}
	if d := res.Docs[2]; d.Line != 5 {
		t.Errorf("want b2 to start on line 5, got %d", d.Line)
	}

	empty := t.TempDir()
	if res := Load([]string{empty}, nil); len(res.Errors) != 1 || res.Errors[0].File != empty {
		t.Errorf("want an error for an empty directory, got %v", res.Errors)
	}
}

func TestValidateObjectChecksObjectsWithoutFiles(t *testing.T) {
	var obj map[string]any
	src := `{"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
	 "metadata": {"name": "p"},
	 "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
	          "placement": {"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": 2}],
	                        "replicaScheduling": {"replicaSchedulingType": "Divided", "bogus": 1}}}}`
	if err := json.Unmarshal([]byte(src), &obj); err != nil {
		t.Fatal(err)
	}
	doc, errs, warns := ValidateObject(obj)
	checkProblems(t, "errors", errs, []want{{0, 0, "spec.placement.replicaScheduling.bogus", "unknown field"}})
	checkProblems(t, "warnings", warns, nil)
	if doc.Namespace != "default" || doc.Name != "p" || doc.Kind != "PropagationPolicy" {
		t.Errorf("unexpected document %+v", doc)
	}
	if got := dig(doc.Object, "spec", "placement", "replicaScheduling", "replicaDivisionPreference"); got != "Weighted" {
		t.Errorf("want the Weighted default, got %v", got)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		p    Problem
		want string
	}{
		{"every part present", Problem{File: "file.yaml", Document: 2, Line: 14, Field: "spec.placement.replicaScheduling.replicaSchedulingType", Reason: `unsupported value "Dividd": must be one of Duplicated, Divided`},
			`file.yaml: document 2: line 14: spec.placement.replicaScheduling.replicaSchedulingType: unsupported value "Dividd": must be one of Duplicated, Divided`},
		{"an object from the bus has only a field", Problem{Field: "spec", Reason: "required value"}, "spec: required value"},
		{"a file-level problem has no field", Problem{File: "dir", Reason: "no .yaml, .yml or .json files in the directory"}, "dir: no .yaml, .yml or .json files in the directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Format(tt.p); got != tt.want {
				t.Errorf("want %q, got %q", tt.want, got)
			}
		})
	}
}

func TestDetectionRules(t *testing.T) {
	tests := []struct {
		name        string
		rule        string
		application bool
		reason      string // empty: valid
	}{
		{"a percentage of unavailable pods", "PodUnavailable > 30%", true, ""},
		{"an inclusive percentage without spaces", "PodUnavailable>=12.5%", true, ""},
		{"a timeout in minutes", "API-Server-Timeout > 3min", false, ""},
		{"a timeout in seconds", "API-Server-Timeout >= 90s", false, ""},
		{"a timeout in Go's notation", "API-Server-Timeout > 1m30s", false, ""},
		{"a percentage above 100", "PodUnavailable > 130%", true, "at most 100%"},
		{"a bare number for a percentage", "PodUnavailable > 30", true, "takes a percentage"},
		{"a zero timeout", "API-Server-Timeout > 0s", false, "greater than 0"},
		{"a timeout without a unit", "API-Server-Timeout > 3", false, "takes a duration"},
		{"a less-than operator", "PodUnavailable < 30%", true, `unsupported operator "<"`},
		{"an unknown metric", "NodeDown > 1", false, `unsupported metric "NodeDown"`},
		{"a cluster metric in the application list", "API-Server-Timeout > 3min", true, "belongs in clusterFailureDetection"},
		{"free text", "when pods fail", true, "must be \"<metric> <op> <threshold>\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, reason := policy.ParseDetectionRule(tt.rule, tt.application)
			if tt.reason == "" && reason != "" || !strings.Contains(reason, tt.reason) {
				t.Errorf("want reason containing %q, got %q", tt.reason, reason)
			}
		})
	}
}

// What the CLI publishes, policyd validates again: that must be accepted
// and must not change.
func TestRevalidatingAPublishedObjectChangesNothing(t *testing.T) {
	dir := examplesDir(t)
	var docs []Document
	for _, sub := range []string{"seed000", "seed002", "seed004"} {
		docs = append(docs, Load([]string{filepath.Join(dir, sub)}, nil).Docs...)
	}
	if len(docs) == 0 {
		t.Fatal("no documents")
	}
	for _, d := range docs {
		t.Run(d.Kind+" "+d.Name, func(t *testing.T) {
			data, err := json.Marshal(d.Object)
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := json.Unmarshal(data, &obj); err != nil {
				t.Fatal(err)
			}
			again, errs, _ := ValidateObject(obj)
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			before, _ := json.Marshal(d.Object)
			after, _ := json.Marshal(again.Object)
			if string(before) != string(after) {
				t.Errorf("object changed:\nwant %s\n got %s", before, after)
			}
		})
	}
}

// A directory is read without its subdirectories, and with them by
// LoadWith with Recursive (kubectl's -R); a symbolic link to a directory is read as
// the directory.
func TestLoadRecursiveReadsSubdirectoriesAndALinkedDirectory(t *testing.T) {
	dir := t.TempDir()
	doc := func(name string) string { return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n" }
	for path, name := range map[string]string{"top.yaml": "top", "sub/deep.yaml": "deep", "sub/notes.txt": ""} {
		full := filepath.Join(dir, "real", path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(doc(name)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	names := func(res Result) []string {
		var out []string
		for _, d := range res.Docs {
			out = append(out, d.Name)
		}
		for _, e := range res.Errors {
			out = append(out, "error: "+e.Reason)
		}
		return out
	}
	for _, c := range []struct {
		what string
		got  Result
		want []string
	}{
		{"a directory", Load([]string{filepath.Join(dir, "real")}, nil), []string{"top"}},
		{"a directory, recursively", LoadWith([]string{filepath.Join(dir, "real")}, nil, LoadOptions{Recursive: true}), []string{"deep", "top"}},
		{"a link to a directory", Load([]string{filepath.Join(dir, "link")}, nil), []string{"top"}},
		{"a link to a directory, recursively", LoadWith([]string{filepath.Join(dir, "link")}, nil, LoadOptions{Recursive: true}), []string{"deep", "top"}},
	} {
		if got := names(c.got); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: read %q, want %q", c.what, got, c.want)
		}
	}
}

// LoadOptions.Namespace is the namespace of a document naming none, and
// the defaults that follow from it follow it too: a policy's selectors
// without a namespace select in it (they selected in default, so a policy
// applied with -n claimed nothing there).
func TestTheLoadNamespaceIsADocumentsOwnAndItsSelectorsDefault(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p}\nspec:\n"+
		"  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n  placement: {clusterAffinity: {clusterNames: [c1]}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]string{"": "default", "team-a": "team-a"} {
		res := LoadWith([]string{f}, nil, LoadOptions{Namespace: ns})
		if len(res.Errors) > 0 || len(res.Docs) != 1 {
			t.Fatalf("namespace %q: %v", ns, res.Errors)
		}
		d := res.Docs[0]
		sel := d.Object["spec"].(map[string]any)["resourceSelectors"].([]any)[0].(map[string]any)
		md := d.Object["metadata"].(map[string]any)
		if d.Namespace != want || !d.NamespaceDefaulted || md["namespace"] != want || sel["namespace"] != want {
			t.Errorf("namespace %q: document in %q (defaulted %t), metadata.namespace %v, selector namespace %v; want all %q",
				ns, d.Namespace, d.NamespaceDefaulted, md["namespace"], sel["namespace"], want)
		}
	}
}

// TestAListItemIsPlacedByTheListsDocumentAndItsPathInTheList: the items of
// a v1 List (what `get -o yaml` prints) are documents of their own, and a
// problem in one names the list's document number, the item's line and
// its path from the list; a document after the list keeps its number.
func TestAListItemIsPlacedByTheListsDocumentAndItsPathInTheList(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: first}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: b}
  spec:
    replicas: "three"
---
apiVersion: v1
kind: ConfigMap
metadata: {name: last}
`)
	res := LoadBytes("list.yaml", data)
	var where []string
	for _, d := range res.Docs {
		where = append(where, d.Where()+" "+d.Name+" "+d.Field("kind"))
	}
	want := []string{
		"list.yaml: document 1 first kind",
		"list.yaml: document 2: items[0] a items[0].kind",
		"list.yaml: document 2: items[1] b items[1].kind",
		"list.yaml: document 3 last kind",
	}
	if !slices.Equal(where, want) {
		t.Errorf("documents:\n%s\nwant:\n%s", strings.Join(where, "\n"), strings.Join(want, "\n"))
	}
	var errs []string
	for _, e := range res.Errors {
		errs = append(errs, Format(e))
	}
	for _, w := range []string{
		`list.yaml: document 2: line 14: items[1].spec.selector: required value`,
		`list.yaml: document 2: line 15: items[1].spec.replicas: invalid type: expected integer, got string "three"`,
	} {
		if !slices.Contains(errs, w) {
			t.Errorf("errors:\n%s\nwant among them: %s", strings.Join(errs, "\n"), w)
		}
	}
}

// TestPortsServiceTypesAndRestartPoliciesTheMembersRefuseAreRefused: a
// Service of type Weird with port 99999, a Deployment with containerPort
// 70000 and restartPolicy Never were accepted, and every member refused
// them (Failed everywhere).
func TestPortsServiceTypesAndRestartPoliciesTheMembersRefuseAreRefused(t *testing.T) {
	res := LoadBytes("bad.yaml", []byte(`apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: Weird
  ports: [{port: 99999, targetPort: 0, protocol: HTTP}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      restartPolicy: Never
      containers: [{name: web, image: nginx, ports: [{containerPort: 70000}]}]
---
apiVersion: v1
kind: Service
metadata: {name: fine}
spec:
  type: NodePort
  ports: [{port: 80, targetPort: http, nodePort: 30080}]
`))
	var got []string
	for _, e := range res.Errors {
		got = append(got, Format(e))
	}
	want := []string{
		`bad.yaml: document 1: line 5: spec.type: unsupported value "Weird": must be one of ClusterIP, ExternalName, LoadBalancer, NodePort`,
		`bad.yaml: document 1: line 6: spec.ports[0].port: invalid value 99999: must be between 1 and 65535, inclusive`,
		`bad.yaml: document 1: line 6: spec.ports[0].targetPort: invalid value 0: must be between 1 and 65535, inclusive`,
		`bad.yaml: document 1: line 6: spec.ports[0].protocol: unsupported value "HTTP": must be one of SCTP, TCP, UDP`,
		`bad.yaml: document 2: line 16: spec.template.spec.restartPolicy: unsupported value "Never": only "Always" is supported`,
		`bad.yaml: document 2: line 17: spec.template.spec.containers[0].ports[0].containerPort: invalid value 70000: must be between 1 and 65535, inclusive`,
	}
	if !slices.Equal(want, got) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
