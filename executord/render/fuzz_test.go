package render

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events/policy"
)

func FuzzParseImage(f *testing.F) {
	for _, s := range []string{
		"nginx", "nginx:1.25.3", "fictional.registry.example:10443/subpath/imagename:v1.0.0",
		"10.10.10.10:10443/subpath/imagename", "subpath/imagename:v1.0.0", "localhost/a",
		"localhost:5000/a/b:tag", "nginx@sha256:" + hex64, "nginx:1.19@sha256:" + hex64,
		"registry.k8s.io/pause:3.9", "UPPER", "", "a/b/c/d:e", "[::1]:5000/a:b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1024 { // RE2 is linear, but megabyte inputs only slow the search down
			t.Skip()
		}
		img, err := parseImage(s)
		if err != nil {
			return
		}
		out := img.String()
		// Canonical inputs (no tag+digest pair, whose digest is dropped) print back unchanged.
		if !(img.Tag != "" && strings.Contains(s, "@")) && out != s {
			t.Fatalf("parseImage(%q).String() = %q", s, out)
		}
		again, err := parseImage(out)
		if err != nil {
			t.Fatalf("printed %q of %q does not parse: %v", out, s, err)
		}
		if again != img {
			t.Fatalf("reparse of %q: %+v, want %+v", out, again, img)
		}
		for _, c := range []string{policy.ImageRegistry, policy.ImageRepository, policy.ImageTag} {
			for _, op := range []string{policy.OverriderOpAdd, policy.OverriderOpReplace, policy.OverriderOpRemove} {
				if _, err := overrideImage(s, policy.ImageOverrider{Component: c, Operator: op, Value: "x"}); err != nil {
					t.Fatalf("override of parsable %q failed: %v", s, err)
				}
			}
		}
	})
}

func FuzzFieldOverrider(f *testing.F) {
	f.Add("database:\n  host: a\n", "/database/host", "replace", []byte(`"b"`), true)
	f.Add(`{"a":[1,2]}`, "/a/-", "add", []byte(`3`), false)
	f.Add(`{"a":1}`, "/a", "remove", []byte(nil), false)
	f.Add("- 1\n- 2\n", "/0", "remove", []byte(nil), true)
	f.Add("", "", "add", []byte(`{}`), true)
	f.Add("a: &x 1\nb: *x\n", "/c", "add", []byte(`{"k":[null]}`), true)
	f.Fuzz(func(t *testing.T, doc, subPath, op string, value []byte, isYAML bool) {
		if len(doc)+len(subPath)+len(value) > 4096 {
			t.Skip()
		}
		o := policy.FieldOverrider{FieldPath: "/data/key"}
		if isYAML {
			o.YAML = []policy.YAMLPatchOperation{{SubPath: subPath, Operator: op, Value: value}}
		} else {
			o.JSON = []policy.JSONPatchOperation{{SubPath: subPath, Operator: op, Value: value}}
		}
		cm := map[string]any{"kind": "ConfigMap", "data": map[string]any{"key": doc}}
		if err := applyFieldOverrider(cm, o); err != nil {
			return
		}
		out, ok := cm["data"].(map[string]any)["key"].(string)
		if !ok {
			t.Fatalf("field is no longer a string: %#v", cm["data"])
		}
		if isYAML {
			if _, err := yaml.YAMLToJSON([]byte(out)); err != nil {
				t.Fatalf("output YAML %q does not parse: %v", out, err)
			}
		} else if out != "" && !json.Valid([]byte(out)) { // evanphx returns an empty document as is
			t.Fatalf("output JSON %q is invalid", out)
		}
	})
}

func BenchmarkRender(b *testing.B) {
	template := obj(b, deployment)
	ps := []policy.OverridePolicy{
		pol(b, `
kind: ClusterOverridePolicy
metadata: {name: mirror}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - targetCluster: {labelSelector: {matchLabels: {env: prod}}}
    overriders:
      imageOverrider:
      - {component: Registry, operator: replace, value: mirror.example.com}
      labelsOverrider:
      - {operator: add, value: {mirrored: "true"}}
`),
		pol(b, `
kind: OverridePolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [cluster1]}
    overriders:
      argsOverrider:
      - {containerName: web, operator: add, value: [--verbose]}
      plaintext:
      - {path: /spec/template/spec/containers/0/resources, operator: add, value: {limits: {cpu: "1"}}}
`),
	}
	replicas := int32(3)
	overrides := applicable(template, ps)
	b.ReportAllocs()
	for b.Loop() {
		if _, applied, err := Render(template, cluster1, overrides, &replicas); err != nil || len(applied) != 2 {
			b.Fatal(err, applied)
		}
	}
}
