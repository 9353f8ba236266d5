package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func overridePolicy(t *testing.T, doc string) OverridePolicy {
	t.Helper()
	var p OverridePolicy
	if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// names renders policies as "ClusterOverridePolicy/NAME" or
// "OverridePolicy/NS/NAME".
func names(ps []OverridePolicy) []string {
	var out []string
	for i := range ps {
		if cluster, _ := ps[i].Scope(); cluster {
			out = append(out, KindClusterOverridePolicy+"/"+ps[i].Name)
		} else {
			out = append(out, KindOverridePolicy+"/"+ps[i].Namespace+"/"+ps[i].Name)
		}
	}
	return out
}

func TestApplicableOverridesOrder(t *testing.T) {
	web := ResourceFacts{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}}
	cop := func(name, sels string) OverridePolicy {
		return overridePolicy(t, "kind: ClusterOverridePolicy\nmetadata: {name: "+name+"}\nspec:\n"+sels)
	}
	op := func(ns, name, sels string) OverridePolicy {
		return overridePolicy(t, "kind: OverridePolicy\nmetadata: {name: "+name+", namespace: "+ns+"}\nspec:\n"+sels)
	}
	const byName = "  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]\n"
	const byLabel = "  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {app: web}}}]\n"
	const byKind = "  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n"
	const otherName = "  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: other}]\n"
	const wrongKind = "  resourceSelectors: [{apiVersion: v1, kind: Service}]\n"
	const mixed = "  resourceSelectors: [{apiVersion: v1, kind: Service}, {apiVersion: apps/v1, kind: Deployment, name: web}]\n"
	const otherNS = "  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: kube-system}]\n"

	tests := []struct {
		name string
		all  []OverridePolicy
		want []string
	}{
		{"cluster override policies come before override policies whatever their names",
			[]OverridePolicy{op("default", "a", ""), cop("z", "")},
			[]string{"ClusterOverridePolicy/z", "OverridePolicy/default/a"}},
		{"equal priorities are applied in ascending name order",
			[]OverridePolicy{op("default", "b", byKind), op("default", "a", byKind), op("default", "c", "")},
			[]string{"OverridePolicy/default/a", "OverridePolicy/default/b", "OverridePolicy/default/c"}},
		{"ascending implicit priority: match-all then label selector then name",
			[]OverridePolicy{op("default", "a-name", byName), op("default", "b-label", byLabel), op("default", "c-all", byKind), op("default", "d-none", "")},
			[]string{"OverridePolicy/default/c-all", "OverridePolicy/default/d-none", "OverridePolicy/default/b-label", "OverridePolicy/default/a-name"}},
		{"cluster override policies are ordered by priority too",
			[]OverridePolicy{cop("a", byName), cop("b", byLabel), cop("c", "")},
			[]string{"ClusterOverridePolicy/c", "ClusterOverridePolicy/b", "ClusterOverridePolicy/a"}},
		{"a multi-selector policy takes its best selector",
			[]OverridePolicy{op("default", "a", mixed), op("default", "b", byLabel)},
			[]string{"OverridePolicy/default/b", "OverridePolicy/default/a"}},
		{"mismatching policies and those of other namespaces are left out",
			[]OverridePolicy{op("default", "a", otherName), op("default", "b", wrongKind), op("other", "c", ""), cop("d", otherNS), op("default", "e", "")},
			[]string{"OverridePolicy/default/e"}},
		{"other kinds are ignored and a kindless policy is scoped by its namespace",
			[]OverridePolicy{overridePolicy(t, "kind: PropagationPolicy\nmetadata: {name: pp, namespace: default}\nspec: {}\n"), overridePolicy(t, "metadata: {name: x}\nspec: {}\n"), overridePolicy(t, "metadata: {name: yy, namespace: default}\nspec: {}\n")},
			[]string{"ClusterOverridePolicy/x", "OverridePolicy/default/yy"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, names(ApplicableOverrides(web, tc.all))); diff != "" {
				t.Errorf("applicable overrides (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a cluster-scoped template gets only cluster override policies", func(t *testing.T) {
		ns := ResourceFacts{APIVersion: "v1", Kind: "Namespace", Name: "default"}
		got := ApplicableOverrides(ns, []OverridePolicy{op("default", "a", ""), cop("b", "")})
		if diff := cmp.Diff([]string{"ClusterOverridePolicy/b"}, names(got)); diff != "" {
			t.Errorf("applicable overrides (-want +got):\n%s", diff)
		}
	})
}

func TestOverridePolicyRules(t *testing.T) {
	east := &ClusterAffinity{ClusterNames: []string{"east"}}
	west := &ClusterAffinity{ClusterNames: []string{"west"}}
	labels := Overriders{LabelsOverrider: []LabelAnnotationOverrider{{Operator: "add", Value: map[string]string{"a": "b"}}}}
	type rules struct {
		Rules      []RuleWithCluster
		Deprecated bool
	}
	for _, tc := range []struct {
		name string
		spec OverrideSpec
		want rules
	}{
		{
			"overrideRules are the rules, the deprecated pair beside them ignored",
			OverrideSpec{OverrideRules: []RuleWithCluster{{TargetCluster: east, Overriders: labels}, {TargetCluster: west}}, TargetCluster: west, Overriders: labels},
			rules{Rules: []RuleWithCluster{{TargetCluster: east, Overriders: labels}, {TargetCluster: west}}},
		},
		{
			"without overrideRules the deprecated targetCluster and overriders are one rule",
			OverrideSpec{TargetCluster: west, Overriders: labels},
			rules{Rules: []RuleWithCluster{{TargetCluster: west, Overriders: labels}}, Deprecated: true},
		},
		{
			"an empty spec is one rule for every cluster that overrides nothing",
			OverrideSpec{},
			rules{Rules: []RuleWithCluster{{}}, Deprecated: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := OverridePolicy{Spec: tc.spec}
			var got rules
			got.Rules, got.Deprecated = p.Rules()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Rules() (-want +got):\n%s", diff)
			}
		})
	}
}
