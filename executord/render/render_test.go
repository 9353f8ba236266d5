package render

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events/policy"
)

// obj decodes a YAML object the way a template reaches Render (JSON types).
func obj(t testing.TB, doc string) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeObject(j)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func pol(t testing.TB, doc string) policy.OverridePolicy {
	t.Helper()
	var p policy.OverridePolicy
	if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// at reads a value by JSON pointer; nil when absent.
func at(t testing.TB, m map[string]any, path string) any {
	t.Helper()
	v, _, err := walkPointer(m, path)
	if err != nil {
		return nil
	}
	return v
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
  uid: 1234
  resourceVersion: "77"
  generation: 3
  creationTimestamp: "2024-01-01T00:00:00Z"
  selfLink: /apis/apps/v1/namespaces/default/deployments/web
  managedFields: [{manager: kubectl}]
spec:
  replicas: 6
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
      - name: init
        image: busybox:1.36
      containers:
      - name: web
        image: nginx:1.25.3
        command: [nginx, -g, daemon off;]
      - name: sidecar
        image: registry.k8s.io/pause:3.9
status:
  readyReplicas: 6
`

var (
	cluster1 = Cluster{Name: "cluster1", Labels: map[string]string{"env": "prod"}, Spec: policy.ClusterSpec{Provider: "aws", Region: "eu"}}
	cluster2 = Cluster{Name: "cluster2", Labels: map[string]string{"env": "dev"}, Spec: policy.ClusterSpec{Provider: "gcp"}}
)

// applicable is what a binding carries for the template: the policies of
// all that apply to it, in Karmada's order.
func applicable(template map[string]any, all []policy.OverridePolicy) []policy.OverridePolicy {
	return policy.ApplicableOverrides(policy.ResourceFactsOf(template), all)
}

// renderOne renders the template in cluster with the policies that apply to it.
func renderOne(t testing.TB, template map[string]any, c Cluster, ps ...policy.OverridePolicy) (map[string]any, []string, error) {
	t.Helper()
	return Render(template, c, applicable(template, ps), nil)
}

func opWith(rules string) string {
	return `
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: p, namespace: default}
spec:
` + rules
}

func TestRenderOverriders(t *testing.T) {
	tests := []struct {
		name     string
		template string // default: deployment
		policy   string // spec body of an OverridePolicy default/p
		cluster  Cluster
		want     map[string]any // dotted path -> value (nil = absent)
		wantErr  string         // substring; empty = success
	}{
		{
			name:   "an image overrider without predicate rewrites every container of a Deployment but not init containers",
			policy: "  overrideRules:\n  - overriders:\n      imageOverrider:\n      - {component: Registry, operator: replace, value: mirror.example.com}\n",
			want: map[string]any{
				"/spec/template/spec/containers/0/image":     "mirror.example.com/nginx:1.25.3",
				"/spec/template/spec/containers/1/image":     "mirror.example.com/pause:3.9",
				"/spec/template/spec/initContainers/0/image": "busybox:1.36",
			},
		},
		{
			name:     "an image overrider without predicate rewrites the containers of a Pod",
			template: "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers:\n  - {name: a, image: nginx}\n",
			policy:   "  overrideRules:\n  - overriders:\n      imageOverrider:\n      - {component: Tag, operator: add, value: \"1.25\"}\n",
			want:     map[string]any{"/spec/containers/0/image": "nginx:1.25"},
		},
		{
			name:     "an image overrider without predicate leaves a CronJob untouched",
			template: cronJob,
			policy:   "  overrideRules:\n  - overriders:\n      imageOverrider:\n      - {component: Registry, operator: replace, value: mirror.example.com}\n",
			want:     map[string]any{"/spec/jobTemplate/spec/template/spec/containers/0/image": "busybox:1.36"},
		},
		{
			name:     "an image overrider with predicate rewrites exactly that path of any kind",
			template: cronJob,
			policy:   "  overrideRules:\n  - overriders:\n      imageOverrider:\n      - predicate: {path: /spec/jobTemplate/spec/template/spec/containers/0/image}\n        component: Registry\n        operator: replace\n        value: mirror.example.com\n",
			want:     map[string]any{"/spec/jobTemplate/spec/template/spec/containers/0/image": "mirror.example.com/busybox:1.36"},
		},
		{
			name:   "an image overrider with predicate leaves the other containers alone",
			policy: "  overrideRules:\n  - overriders:\n      imageOverrider:\n      - predicate: {path: /spec/template/spec/containers/1/image}\n        component: Tag\n        operator: replace\n        value: \"3.10\"\n",
			want: map[string]any{
				"/spec/template/spec/containers/0/image": "nginx:1.25.3",
				"/spec/template/spec/containers/1/image": "registry.k8s.io/pause:3.10",
			},
		},
		{
			name:    "an image predicate path that does not exist is an error naming policy rule and overrider",
			policy:  "  overrideRules:\n  - overriders: {}\n  - overriders:\n      imageOverrider:\n      - {component: Tag, operator: remove}\n      - predicate: {path: /spec/template/spec/containers/5/image}\n        component: Tag\n        operator: remove\n",
			wantErr: "override OverridePolicy/default/p: overrideRules[1]: imageOverrider[1]: predicate path",
		},
		{
			name:    "an image predicate path to a non-string is an error",
			policy:  "  overrideRules:\n  - overriders:\n      imageOverrider:\n      - predicate: {path: /spec/replicas}\n        component: Tag\n        operator: remove\n",
			wantErr: "not a string",
		},
		{
			name:     "an unparsable image fails the render",
			policy:   "  overrideRules:\n  - overriders:\n      imageOverrider:\n      - predicate: {path: /metadata/name}\n        component: Tag\n        operator: remove\n",
			template: strings.Replace(deployment, "name: web\n  namespace", "name: Web\n  namespace", 1),
			wantErr:  "imageOverrider[0]: parse image",
		},
		{
			name:   "a command overrider adds to a missing field",
			policy: "  overrideRules:\n  - overriders:\n      commandOverrider:\n      - {containerName: sidecar, operator: add, value: [/pause, -v]}\n",
			want:   map[string]any{"/spec/template/spec/containers/1/command": []any{"/pause", "-v"}},
		},
		{
			name:   "a command overrider appends to an existing list",
			policy: "  overrideRules:\n  - overriders:\n      commandOverrider:\n      - {containerName: web, operator: add, value: [-x]}\n",
			want:   map[string]any{"/spec/template/spec/containers/0/command": []any{"nginx", "-g", "daemon off;", "-x"}},
		},
		{
			name:   "a command overrider removes every element equal to a listed value",
			policy: "  overrideRules:\n  - overriders:\n      commandOverrider:\n      - {containerName: web, operator: remove, value: [-g, daemon off;, absent]}\n",
			want:   map[string]any{"/spec/template/spec/containers/0/command": []any{"nginx"}},
		},
		{
			name:   "an args overrider removing from a missing field adds an empty list",
			policy: "  overrideRules:\n  - overriders:\n      argsOverrider:\n      - {containerName: web, operator: remove, value: [--x]}\n",
			want: map[string]any{
				"/spec/template/spec/containers/0/args": []any{},
				"/spec/template/spec/containers/1/args": nil,
			},
		},
		{
			name:   "an args overrider for a container that does not exist changes nothing",
			policy: "  overrideRules:\n  - overriders:\n      argsOverrider:\n      - {containerName: nope, operator: add, value: [--x]}\n",
			want: map[string]any{
				"/spec/template/spec/containers/0/args": nil,
				"/spec/template/spec/containers/1/args": nil,
			},
		},
		{
			name:     "a command overrider on an unsupported kind changes nothing",
			template: cronJob,
			policy:   "  overrideRules:\n  - overriders:\n      commandOverrider:\n      - {containerName: job, operator: add, value: [sh]}\n",
			want:     map[string]any{"/spec/jobTemplate/spec/template/spec/containers/0/command": nil},
		},
		{
			name:   "a labels overrider adds and overwrites labels of the resource itself, not of the pod template",
			policy: "  overrideRules:\n  - overriders:\n      labelsOverrider:\n      - {operator: add, value: {app: web2, tier: front}}\n",
			want: map[string]any{
				"/metadata/labels/app":                "web2",
				"/metadata/labels/tier":               "front",
				"/spec/template/metadata/labels/tier": nil,
				"/spec/template/metadata/labels/app":  "web",
			},
		},
		{
			name:   "a labels replace of a missing key is skipped and of an existing key applied",
			policy: "  overrideRules:\n  - overriders:\n      labelsOverrider:\n      - {operator: replace, value: {app: web3, missing: x}}\n",
			want:   map[string]any{"/metadata/labels/app": "web3", "/metadata/labels/missing": nil},
		},
		{
			name:   "a labels remove drops the key whatever value is given",
			policy: "  overrideRules:\n  - overriders:\n      labelsOverrider:\n      - {operator: remove, value: {app: not-the-value}}\n",
			want:   map[string]any{"/metadata/labels/app": nil},
		},
		{
			name:   "an annotations overrider add creates the map and accepts keys with slashes",
			policy: "  overrideRules:\n  - overriders:\n      annotationsOverrider:\n      - {operator: add, value: {example.com/owner: team-a}}\n      - {operator: replace, value: {example.com/owner: team-b}}\n",
			want:   map[string]any{"/metadata/annotations": nil}, // checked below via special case
		},
		{
			name:   "a plaintext replace changes an existing field",
			policy: "  overrideRules:\n  - overriders:\n      plaintext:\n      - {path: /spec/replicas, operator: replace, value: 2}\n",
			want:   map[string]any{"/spec/replicas": int64(2)},
		},
		{
			name:    "a plaintext replace on a missing path fails",
			policy:  "  overrideRules:\n  - overriders:\n      plaintext:\n      - {path: /spec/paused, operator: replace, value: true}\n",
			wantErr: "overrideRules[0]: plaintext:",
		},
		{
			name:    "a plaintext remove on a missing path fails",
			policy:  "  overrideRules:\n  - overriders:\n      plaintext:\n      - {path: /spec/paused, operator: remove}\n",
			wantErr: "plaintext",
		},
		{
			name:   "a plaintext add on an object member overwrites it and remove deletes",
			policy: "  overrideRules:\n  - overriders:\n      plaintext:\n      - {path: /spec/replicas, operator: add, value: 9}\n      - {path: /spec/template/spec/initContainers, operator: remove}\n",
			want:   map[string]any{"/spec/replicas": int64(9), "/spec/template/spec/initContainers": nil},
		},
		{
			name:   "overriders in one block apply in the fixed order image then plaintext",
			policy: "  overrideRules:\n  - overriders:\n      plaintext:\n      - {path: /spec/template/spec/containers/0/image, operator: replace, value: \"busybox:1\"}\n      imageOverrider:\n      - {component: Registry, operator: replace, value: r.io}\n",
			want:   map[string]any{"/spec/template/spec/containers/0/image": "busybox:1"},
		},
		{
			name:     "a field overrider edits YAML held in a ConfigMap key",
			template: configMap,
			policy:   "  overrideRules:\n  - overriders:\n      fieldOverrider:\n      - fieldPath: /data/db-config.yaml\n        yaml:\n        - {subPath: /database/host, operator: replace, value: db.cluster1.local}\n        - {subPath: /database/ssl, operator: add, value: true}\n        - {subPath: /database/port, operator: remove}\n",
			want:     map[string]any{"/data/db-config.yaml": "database:\n  host: db.cluster1.local\n  name: app\n  ssl: true\n"},
		},
		{
			name:     "a field overrider edits JSON held in a ConfigMap key",
			template: configMap,
			policy:   "  overrideRules:\n  - overriders:\n      fieldOverrider:\n      - fieldPath: /data/settings.json\n        json:\n        - {subPath: /level, operator: replace, value: debug}\n        - {subPath: /features/-, operator: add, value: b}\n",
			want:     map[string]any{"/data/settings.json": `{"level":"debug","features":["a","b"]}`},
		},
		{
			name:     "a field overrider on a missing field fails",
			template: configMap,
			policy:   "  overrideRules:\n  - overriders:\n      fieldOverrider:\n      - fieldPath: /data/nope.yaml\n        yaml:\n        - {subPath: /a, operator: add, value: 1}\n",
			wantErr:  "fieldOverrider[0]",
		},
		{
			name:     "a field overrider replace on a missing sub path fails",
			template: configMap,
			policy:   "  overrideRules:\n  - overriders:\n      fieldOverrider:\n      - fieldPath: /data/settings.json\n        json:\n        - {subPath: /nope, operator: replace, value: 1}\n",
			wantErr:  "fieldOverrider[0]",
		},
		{
			name:     "a field overrider on a non-string field fails",
			template: configMap,
			policy:   "  overrideRules:\n  - overriders:\n      fieldOverrider:\n      - fieldPath: /data\n        json:\n        - {subPath: /a, operator: add, value: 1}\n",
			wantErr:  "not a string",
		},
		{
			name:     "a field overrider with both yaml and json uses the yaml operations",
			template: configMap,
			policy:   "  overrideRules:\n  - overriders:\n      fieldOverrider:\n      - fieldPath: /data/db-config.yaml\n        yaml:\n        - {subPath: /database, operator: replace, value: {host: h}}\n        json:\n        - {subPath: /nope, operator: remove}\n",
			want:     map[string]any{"/data/db-config.yaml": "database:\n  host: h\n"},
		},
		{
			name:     "a field overrider with neither yaml nor json fails",
			template: configMap,
			policy:   "  overrideRules:\n  - overriders:\n      fieldOverrider:\n      - fieldPath: /data/settings.json\n",
			wantErr:  "fieldOverrider[0]: neither yaml nor json",
		},
		{
			name:     "a field overrider path with an escaped slash reaches an annotation",
			template: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: default\n  annotations: {example.com/cfg: '{\"a\":1}'}\n",
			policy:   "  overrideRules:\n  - overriders:\n      fieldOverrider:\n      - fieldPath: /metadata/annotations/example.com~1cfg\n        json:\n        - {subPath: /a, operator: replace, value: 2}\n",
			want:     map[string]any{"/metadata/annotations/example.com~1cfg": `{"a":2}`},
		},
		{
			name:    "the deprecated targetCluster and overriders pair is used when overrideRules is empty",
			policy:  "  targetCluster: {clusterNames: [cluster1]}\n  overriders:\n    labelsOverrider:\n    - {operator: add, value: {old: form}}\n",
			cluster: cluster1,
			want:    map[string]any{"/metadata/labels/old": "form"},
		},
		{
			name:    "the deprecated pair does not apply to a cluster its targetCluster excludes",
			policy:  "  targetCluster: {clusterNames: [cluster1]}\n  overriders:\n    labelsOverrider:\n    - {operator: add, value: {old: form}}\n",
			cluster: cluster2,
			want:    map[string]any{"/metadata/labels/old": nil},
		},
		{
			name:    "the deprecated pair is ignored when overrideRules is set",
			policy:  "  targetCluster: {clusterNames: [cluster1]}\n  overriders:\n    labelsOverrider:\n    - {operator: add, value: {old: form}}\n  overrideRules:\n  - overriders:\n      labelsOverrider:\n      - {operator: add, value: {new: form}}\n",
			cluster: cluster1,
			want:    map[string]any{"/metadata/labels/old": nil, "/metadata/labels/new": "form"},
		},
		{
			name:    "a deprecated-form failure is reported as the deprecated overriders",
			policy:  "  overriders:\n    plaintext:\n    - {path: /nope, operator: remove}\n",
			wantErr: "override OverridePolicy/default/p: overriders (deprecated form): plaintext",
		},
		{
			name:    "rules apply in declaration order for the clusters they target",
			policy:  "  overrideRules:\n  - targetCluster: {labelSelector: {matchLabels: {env: prod}}}\n    overriders:\n      labelsOverrider:\n      - {operator: add, value: {a: \"1\", b: \"1\"}}\n  - targetCluster: {fieldSelector: {matchExpressions: [{key: provider, operator: In, values: [aws]}]}}\n    overriders:\n      labelsOverrider:\n      - {operator: add, value: {b: \"2\"}}\n  - targetCluster: {exclude: [cluster1]}\n    overriders:\n      labelsOverrider:\n      - {operator: add, value: {c: \"3\"}}\n",
			cluster: cluster1,
			want:    map[string]any{"/metadata/labels/a": "1", "/metadata/labels/b": "2", "/metadata/labels/c": nil},
		},
		{
			name:    "rules whose targetCluster selectors do not match are skipped",
			policy:  "  overrideRules:\n  - targetCluster: {labelSelector: {matchLabels: {env: prod}}}\n    overriders:\n      labelsOverrider:\n      - {operator: add, value: {a: \"1\"}}\n  - targetCluster: {exclude: [cluster1]}\n    overriders:\n      labelsOverrider:\n      - {operator: add, value: {c: \"3\"}}\n",
			cluster: cluster2,
			want:    map[string]any{"/metadata/labels/a": nil, "/metadata/labels/c": "3"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmplDoc := tc.template
			if tmplDoc == "" {
				tmplDoc = deployment
			}
			c := tc.cluster
			if c.Name == "" {
				c = cluster1
			}
			template := obj(t, tmplDoc)
			before, _ := json.Marshal(template)
			got, applied, err := renderOne(t, template, c, pol(t, opWith(tc.policy)))
			after, _ := json.Marshal(template)
			if string(before) != string(after) {
				t.Fatalf("Render mutated its template")
			}
			if tc.wantErr != "" {
				var oe *OverrideError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &oe) {
					t.Fatalf("err = %v, want an *OverrideError containing %q", err, tc.wantErr)
				}
				if got != nil || applied != nil {
					t.Fatalf("a failed render returned a manifest")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tc.name, "annotations overrider add") {
				if v := got["metadata"].(map[string]any)["annotations"].(map[string]any)["example.com/owner"]; v != "team-b" {
					t.Fatalf("annotation = %v", v)
				}
				return
			}
			for path, want := range tc.want {
				if g := at(t, got, path); !reflect.DeepEqual(g, want) {
					t.Errorf("%s = %#v, want %#v", path, g, want)
				}
			}
		})
	}
}

const cronJob = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj, namespace: default}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - {name: job, image: "busybox:1.36"}
`

const configMap = `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default}
data:
  db-config.yaml: |
    database:
      host: localhost
      port: 5432
      name: app
  settings.json: '{"level":"info","features":["a"]}'
`

func TestLaterPoliciesWinConflicts(t *testing.T) {
	template := obj(t, deployment)
	label := func(kind, ns, name, sels, value string) policy.OverridePolicy {
		meta := "{name: " + name + "}"
		if ns != "" {
			meta = "{name: " + name + ", namespace: " + ns + "}"
		}
		return pol(t, "kind: "+kind+"\nmetadata: "+meta+"\nspec:\n"+sels+"  overrideRules:\n  - overriders:\n      labelsOverrider:\n      - {operator: add, value: {winner: "+value+"}}\n")
	}
	const byName = "  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]\n"
	all := []policy.OverridePolicy{
		label("OverridePolicy", "default", "zz-all", "", "op-all"),
		label("OverridePolicy", "default", "aa-name", byName, "op-name"),
		label("ClusterOverridePolicy", "", "zzz", byName, "cop"),
	}
	got, applied, err := Render(template, cluster1, applicable(template, all), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := at(t, got, "/metadata/labels/winner"); w != "op-name" {
		t.Fatalf("winner = %v, want the most specific OverridePolicy", w)
	}
	want := []string{"ClusterOverridePolicy/zzz", "OverridePolicy/default/zz-all", "OverridePolicy/default/aa-name"}
	if !reflect.DeepEqual(applied, want) {
		t.Fatalf("applied = %v, want %v", applied, want)
	}
	ann := got["metadata"].(map[string]any)["annotations"].(map[string]any)
	var cops, ops []appliedShadow
	if err := json.Unmarshal([]byte(ann[AnnotationAppliedClusterOverrides].(string)), &cops); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(ann[AnnotationAppliedOverrides].(string)), &ops); err != nil {
		t.Fatal(err)
	}
	if len(cops) != 1 || cops[0].PolicyName != "zzz" || len(ops) != 2 || ops[0].PolicyName != "zz-all" || ops[1].PolicyName != "aa-name" {
		t.Fatalf("applied annotations = %v / %v", cops, ops)
	}
	if len(ops[1].Overriders.LabelsOverrider) != 1 {
		t.Fatalf("the annotation does not carry the overriders: %+v", ops[1])
	}
}

func TestRenderBookkeeping(t *testing.T) {
	six := int32(2)
	tests := []struct {
		name     string
		template string
		replicas *int32
		want     map[string]any
	}{
		{"replicas set a Deployment's spec.replicas", deployment, &six, map[string]any{"/spec/replicas": int64(2)}},
		{"nil replicas leave the template's count", deployment, nil, map[string]any{"/spec/replicas": int64(6)}},
		{"replicas set a StatefulSet's spec.replicas", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\nspec: {replicas: 5}\n", &six, map[string]any{"/spec/replicas": int64(2)}},
		{"replicas set a ReplicaSet's spec.replicas", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: s}\nspec: {}\n", &six, map[string]any{"/spec/replicas": int64(2)}},
		{"replicas set a Job's spec.parallelism", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {parallelism: 4, completions: 8}\n", &six, map[string]any{"/spec/parallelism": int64(2), "/spec/completions": int64(8), "/spec/replicas": nil}},
		{"replicas leave other kinds alone", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {}\n", &six, map[string]any{"/spec/replicas": nil}},
		{"server-owned fields and status are removed", deployment, nil, map[string]any{
			"/status": nil, "/metadata/uid": nil, "/metadata/resourceVersion": nil, "/metadata/generation": nil,
			"/metadata/creationTimestamp": nil, "/metadata/selfLink": nil, "/metadata/managedFields": nil,
			"/metadata/name": "web", "/metadata/labels/app": "web",
		}},
		{"the manifest is marked as Flotilla's with its template", deployment, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, applied, err := Render(obj(t, tc.template), cluster1, nil, tc.replicas)
			if err != nil {
				t.Fatal(err)
			}
			if applied != nil {
				t.Fatalf("applied = %v with no policies", applied)
			}
			for path, want := range tc.want {
				if g := at(t, got, path); !reflect.DeepEqual(g, want) {
					t.Errorf("%s = %#v, want %#v", path, g, want)
				}
			}
			meta := got["metadata"].(map[string]any)
			if meta["labels"].(map[string]any)[LabelManaged] != "true" {
				t.Errorf("missing %s label", LabelManaged)
			}
			ann := meta["annotations"].(map[string]any)
			if _, ok := ann[AnnotationAppliedOverrides]; ok {
				t.Errorf("applied-overrides annotation without any policy")
			}
			if tc.template == deployment && ann[AnnotationTemplate] != "default/Deployment/web" {
				t.Errorf("%s = %v", AnnotationTemplate, ann[AnnotationTemplate])
			}
		})
	}
}

func TestRenderRejectsNilTemplate(t *testing.T) {
	if _, _, err := Render(nil, cluster1, nil, nil); err == nil {
		t.Fatal("want an error")
	}
}

func TestRenderNormalisesNumbersAndCopiesDeeply(t *testing.T) {
	template := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "b"}},
		"spec":     map[string]any{"replicas": 3, "big": int64(1) << 60, "ratio": 0.5},
	}
	got, _, err := Render(template, cluster1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := got["spec"].(map[string]any)
	if spec["replicas"] != int64(3) || spec["big"] != int64(1)<<60 || spec["ratio"] != 0.5 {
		t.Fatalf("numbers = %#v", spec)
	}
	got["metadata"].(map[string]any)["labels"].(map[string]any)["a"] = "changed"
	if template["metadata"].(map[string]any)["labels"].(map[string]any)["a"] != "b" {
		t.Fatal("the manifest shares maps with the template")
	}
}

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSeed000RegistryPerCluster(t *testing.T) {
	docs := strings.Split(readTestdata(t, "seed000-my-app.yaml"), "\n---\n")
	deploy, service := obj(t, docs[0]), obj(t, docs[1])
	op := pol(t, readTestdata(t, "seed000-override-policy.yaml"))
	six := int32(3)
	tests := []struct {
		name    string
		cluster string
		image   string
		applied []string
	}{
		{"cluster1 pulls from the Beijing registry", "cluster1", "registry.beijing.example.com/nginx:1.25.3", []string{"OverridePolicy/default/my-app-override"}},
		{"cluster2 pulls from the Shanghai registry", "cluster2", "registry.shanghai.example.com/nginx:1.25.3", []string{"OverridePolicy/default/my-app-override"}},
		{"cluster3 is untouched", "cluster3", "nginx:1.25.3", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, applied, err := Render(deploy, Cluster{Name: tc.cluster}, applicable(deploy, []policy.OverridePolicy{op}), &six)
			if err != nil {
				t.Fatal(err)
			}
			if img := at(t, got, "/spec/template/spec/containers/0/image"); img != tc.image {
				t.Errorf("image = %v, want %s", img, tc.image)
			}
			if !reflect.DeepEqual(applied, tc.applied) {
				t.Errorf("applied = %v, want %v", applied, tc.applied)
			}
			if r := at(t, got, "/spec/replicas"); r != int64(3) {
				t.Errorf("replicas = %v", r)
			}
		})
	}
	t.Run("the Service is not selected by the Deployment's override policy", func(t *testing.T) {
		if got := applicable(service, []policy.OverridePolicy{op}); len(got) != 0 {
			t.Fatalf("got %v", got)
		}
	})
}

func TestSeed002StorageClassPerCloud(t *testing.T) {
	op := pol(t, readTestdata(t, "seed002-storage-override.yaml"))
	pvc := obj(t, `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  storageClassName: standard
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`)
	for _, tc := range []struct{ name, cluster, want string }{
		{"Azure gets azure-disk", "azure-staging", "azure-disk"},
		{"AWS gets ebs-sc", "aws-prod", "ebs-sc"},
		{"another cluster keeps the template's class", "gcp-dev", "standard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := Render(pvc, Cluster{Name: tc.cluster}, applicable(pvc, []policy.OverridePolicy{op}), nil)
			if err != nil {
				t.Fatal(err)
			}
			if sc := at(t, got, "/spec/storageClassName"); sc != tc.want {
				t.Fatalf("storageClassName = %v, want %s", sc, tc.want)
			}
		})
	}
	t.Run("a claim without storageClassName fails on the targeted clusters as replace on a missing path does", func(t *testing.T) {
		bare := obj(t, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default}\nspec: {accessModes: [ReadWriteOnce]}\n")
		_, _, err := Render(bare, Cluster{Name: "aws-prod"}, applicable(bare, []policy.OverridePolicy{op}), nil)
		if err == nil || !strings.Contains(err.Error(), "OverridePolicy/default/storage-class: overrideRules[1]: plaintext") {
			t.Fatalf("err = %v", err)
		}
	})
}
