package simulate

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/executord/render"
	"github.com/flotilla-io/flotilla/policyd/binding"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// Rendering once per set of matching rules and setting the replicas on a
// copy must give what render.Render gives for every cluster on its own.
func TestSharedRenderMatchesRender(t *testing.T) {
	docs := validation.Load([]string{benchInput(t, 240, 40)}, nil).Docs
	for _, dir := range []string{"seed000", "seed002", "seed004"} {
		docs = append(docs, validation.Load([]string{filepath.Join(examples, dir)}, nil).Docs...)
	}
	// An override that touches spec.replicas on some clusters, one that
	// edits elsewhere, and a Job (parallelism).
	docs = append(docs, mustLoad(t, `apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: halve, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {team: t3}}}]
  overrideRules:
  - targetCluster: {labelSelector: {matchLabels: {tier: t1}}}
    overriders:
      plaintext: [{path: /spec/replicas, operator: replace, value: 1}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: min-ready}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}, {apiVersion: batch/v1, kind: Job}]
  overrideRules:
  - targetCluster: {labelSelector: {matchLabels: {tier: t2}}}
    overriders:
      plaintext: [{path: /metadata/labels/slow, operator: add, value: "yes"}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: batch, namespace: default, labels: {team: t1}}
spec:
  parallelism: 9
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: jobs, namespace: default}
spec:
  resourceSelectors: [{apiVersion: batch/v1, kind: Job}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
`)...)
	w, err := newWorld(docs)
	if err != nil {
		t.Fatal(err)
	}
	checked, shared, halved, parallelism := 0, 0, 0, int64(0)
	for _, td := range w.templates {
		res, _ := w.simulate(td)
		if res.Policy == nil {
			continue
		}
		for c, m := range res.Manifests {
			spec, _ := m["spec"].(map[string]any)
			if slices.Contains(res.Overrides[c], "OverridePolicy/default/halve") && spec["replicas"] == int64(1) {
				halved++
			}
			if m["kind"] == "Job" {
				parallelism += spec["parallelism"].(int64)
			}
		}
		facts := td.tmpl.Facts()
		claimed := binding.Claim(facts, td.currentPolicy(), w.policies)
		b := binding.Build(td.tmpl, claimed, policy.ApplicableOverrides(facts, w.overrides), w.priorityClass)
		for _, tc := range res.Clusters {
			var rp *int32
			if b.Replicas > 0 {
				r := tc.Replicas
				rp = &r
			}
			want, applied, err := render.Render(td.tmpl.Object, w.clusters.renderCluster(tc.Name), b.Overrides, rp)
			if err != nil {
				t.Fatalf("%s on %s: %v", facts.Name, tc.Name, err)
			}
			if applied == nil {
				applied = []string{}
			}
			if !reflect.DeepEqual(res.Manifests[tc.Name], want) || !reflect.DeepEqual(res.Overrides[tc.Name], applied) {
				t.Fatalf("%s %s on %s: the shared render differs from render.Render", facts.Kind, facts.Name, tc.Name)
			}
			checked++
		}
		if len(res.Clusters) > 1 {
			shared++
		}
	}
	if halved == 0 || parallelism != 9 {
		t.Fatalf("the replica-touching override applied %d times; Job parallelism sums to %d", halved, parallelism)
	}
	if checked < 500 || shared < 100 {
		t.Fatalf("checked only %d manifests (%d templates on several clusters)", checked, shared)
	}
}

// A failing override is reported per cluster, worded as render.Render
// words it (the rule index is the policy's own).
func TestRenderErrors(t *testing.T) {
	src := dynamicInput + `---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: broken, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  overrideRules:
  - targetCluster: {clusterNames: [a]}
    overriders:
      labelsOverrider: [{operator: add, value: {fine: "yes"}}]
  - targetCluster: {clusterNames: [b]}
    overriders:
      plaintext: [{path: /spec/nothing/here, operator: replace, value: 1}]
`
	docs := mustLoad(t, src)
	rep, err := Run(docs)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if _, ok := r.Manifests["a"]; !ok || len(r.RenderErrors) != 1 {
		t.Fatalf("manifests %v render errors %v", r.Manifests, r.RenderErrors)
	}
	w, _ := newWorld(docs)
	td := w.templates[0]
	facts := td.tmpl.Facts()
	b := binding.Build(td.tmpl, binding.Claim(facts, nil, w.policies), policy.ApplicableOverrides(facts, w.overrides), w.priorityClass)
	six := int32(6)
	_, _, want := render.Render(td.tmpl.Object, w.clusters.renderCluster("b"), b.Overrides, &six)
	if want == nil || r.RenderErrors["b"] != want.Error() || !strings.Contains(want.Error(), "overrideRules[1]") {
		t.Fatalf("render error = %q, want %v", r.RenderErrors["b"], want)
	}
	if len(r.Warnings) != 1 {
		t.Fatalf("warnings = %v", r.Warnings)
	}
}
