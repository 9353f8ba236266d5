package framework

import (
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The compiled label selector must agree with apimachinery's on validity
// and on every match.
func TestCompiledSelectorAgreesWithApimachinery(t *testing.T) {
	expr := func(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	selectors := map[string]*metav1.LabelSelector{
		"an empty selector":                    {},
		"matchLabels":                          {MatchLabels: map[string]string{"env": "prod", "tier": "1"}},
		"In with several values":               {MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", metav1.LabelSelectorOpIn, "prod", "dev", "prod")}},
		"NotIn":                                {MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", metav1.LabelSelectorOpNotIn, "dev")}},
		"Exists and DoesNotExist":              {MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", metav1.LabelSelectorOpExists), expr("gpu", metav1.LabelSelectorOpDoesNotExist)}},
		"an empty key is invalid":              {MatchExpressions: []metav1.LabelSelectorRequirement{expr("", metav1.LabelSelectorOpExists)}},
		"In without values is invalid":         {MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", metav1.LabelSelectorOpIn)}},
		"Exists with values is invalid":        {MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", metav1.LabelSelectorOpExists, "x")}},
		"an unknown operator is invalid":       {MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", "Gt", "1")}},
		"a bad label value is invalid":         {MatchLabels: map[string]string{"env": "not a value!"}},
		"a prefixed key is valid":              {MatchLabels: map[string]string{"example.com/env": "prod"}},
		"a bad prefixed key is invalid":        {MatchLabels: map[string]string{"-bad-/env": "prod"}},
		"a matchLabels and expressions mix":    {MatchLabels: map[string]string{"env": "prod"}, MatchExpressions: []metav1.LabelSelectorRequirement{expr("tier", metav1.LabelSelectorOpNotIn, "2")}},
		"an invalid value in an In is invalid": {MatchExpressions: []metav1.LabelSelectorRequirement{expr("env", metav1.LabelSelectorOpIn, "ok", "not ok")}},
	}
	labelSets := []map[string]string{nil, {"env": "prod"}, {"env": "dev"}, {"env": "prod", "tier": "1"}, {"env": "prod", "tier": "2", "gpu": "yes"}, {"example.com/env": "prod"}}
	for name, ls := range selectors {
		t.Run(name, func(t *testing.T) {
			want, err := metav1.LabelSelectorAsSelector(ls)
			m := CompileAffinity(&policy.ClusterAffinity{LabelSelector: ls})
			if !m.fast && err == nil {
				t.Fatalf("apimachinery accepts the selector, the compiled one does not")
			}
			for _, l := range labelSets {
				w := err == nil && want.Matches(labels.Set(l))
				if got := m.Matches(&ClusterInfo{Name: "c", Labels: l}); got != w {
					t.Errorf("labels %v: want match=%v, got %v", l, w, got)
				}
			}
		})
	}
}
