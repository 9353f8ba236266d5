package framework

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
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

// simpleLabelName is a shortcut: whatever it accepts, apimachinery must
// accept as a label key and as a label value.
func TestSimpleLabelNameIsValid(t *testing.T) {
	alphabet := "aZ09-_./ !é"
	var walk func(prefix string, depth int)
	checked := 0
	walk = func(prefix string, depth int) {
		if simpleLabelName(prefix) {
			checked++
			if errs := content.IsLabelKey(prefix); len(errs) != 0 {
				t.Errorf("%q: accepted, but not a label key: %v", prefix, errs)
			}
			if errs := validation.IsValidLabelValue(prefix); len(errs) != 0 {
				t.Errorf("%q: accepted, but not a label value: %v", prefix, errs)
			}
		}
		if depth == 0 {
			return
		}
		for _, r := range alphabet {
			walk(prefix+string(r), depth-1)
		}
	}
	walk("", 5)
	for _, s := range []string{strings.Repeat("a", 63), strings.Repeat("a", 64), "a.b-c_d", "-a", "a-", "_", "."} {
		want := len(content.IsLabelKey(s)) == 0 && len(validation.IsValidLabelValue(s)) == 0
		if got := simpleLabelName(s); got && !want {
			t.Errorf("%q: accepted, apimachinery rejects it", s)
		} else if got != want && !strings.ContainsAny(s, "/") {
			t.Errorf("%q: simpleLabelName %v, apimachinery %v", s, got, want)
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d names accepted: the walk tests too little", checked)
	}
}
