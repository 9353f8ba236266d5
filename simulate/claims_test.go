package simulate

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/binding"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// claimsInput has policies that select by name, by labels of several
// keys with every operator, across namespaces and priorities, and
// templates whose labels vary on those keys and on others.
func claimsInput() string {
	var sb strings.Builder
	ops := []string{
		`matchLabels: {tier: web}`,
		`matchExpressions: [{key: tier, operator: In, values: [web, api]}]`,
		`matchExpressions: [{key: team, operator: NotIn, values: [a]}]`,
		`matchExpressions: [{key: canary, operator: Exists}]`,
		`matchExpressions: [{key: canary, operator: DoesNotExist}, {key: tier, operator: In, values: [db]}]`,
	}
	for i, op := range ops {
		ns := []string{"default", "prod"}[i%2]
		fmt.Fprintf(&sb, `---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: p%d, namespace: %s}
spec:
  priority: %d
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, labelSelector: {%s}}
  placement: {clusterAffinity: {clusterNames: [a]}}
`, i, ns, i%3, op)
		fmt.Fprintf(&sb, `---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: o%d, namespace: %s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, labelSelector: {%s}}
  overrideRules:
  - overriders:
      labelsOverrider: [{operator: add, value: {o%d: "yes"}}]
`, i, ns, op, i)
	}
	sb.WriteString(`---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: named}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, namespace: default, name: app-3}
  placement: {clusterAffinity: {clusterNames: [a]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterOverridePolicy
metadata: {name: everything}
spec:
  overrideRules:
  - overriders:
      annotationsOverrider: [{operator: add, value: {all: "yes"}}]
---
apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: a}
spec: {}
`)
	labels := []string{"", "tier: web", "tier: api, team: a", "tier: db", "tier: db, canary: x", "team: b, other: z", "canary: y, tier: web"}
	for i := range 40 {
		fmt.Fprintf(&sb, `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  namespace: %s
  labels: {%s}
spec:
  replicas: 1
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: c, image: nginx}]}
`, i, []string{"default", "prod", "other"}[i%3], labels[i%len(labels)])
	}
	return sb.String()
}

// What the claims memo answers is what binding.Claim and policy.ApplicableOverrides
// answer for every template.
func TestClaimsMemoMatchesPolicyd(t *testing.T) {
	unnamed := strings.Replace(claimsInput(), "namespace: default, name: app-3}", "namespace: default}", 1)
	inputs := map[string][]validation.Document{
		"selectors":         mustLoad(t, claimsInput()),
		"selectors-unnamed": mustLoad(t, unnamed),
		"bench":             validation.Load([]string{benchInput(t, 300, 20)}, nil).Docs,
	}
	for _, dir := range []string{"seed000", "seed002", "seed004"} {
		inputs[dir] = validation.Load([]string{filepath.Join(examples, dir)}, nil).Docs
	}
	for name, docs := range inputs {
		w, err := newWorld(docs)
		if err != nil {
			t.Fatal(err)
		}
		hits := 0
		for _, td := range w.templates {
			facts := td.tmpl.Facts()
			current := td.currentPolicy()
			computed := false
			got := w.claims.get(facts, current, func() *claim {
				computed = true
				cl := &claim{policy: binding.Claim(facts, current, w.policies)}
				if cl.policy != nil {
					cl.overrides = policy.ApplicableOverrides(facts, w.overrides)
				}
				return cl
			})
			if !computed {
				hits++
			}
			want := binding.Claim(facts, current, w.policies)
			if (got.policy == nil) != (want == nil) || got.policy != nil && got.policy.Key != want.Key {
				t.Fatalf("%s: %s: memo claims %v, Claim %v", name, facts.Name, got.policy, want)
			}
			if want != nil && !reflect.DeepEqual(got.overrides, policy.ApplicableOverrides(facts, w.overrides)) {
				t.Fatalf("%s: %s: memo overrides differ from ApplicableOverrides", name, facts.Name)
			}
		}
		if (name == "bench" || name == "selectors-unnamed") && hits < len(w.templates)/3 {
			t.Errorf("%s: only %d of %d templates found in the memo", name, hits, len(w.templates))
		}
	}
}
