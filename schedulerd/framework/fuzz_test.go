package framework

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzCompileSelector compares compileSelector, Flotilla's label-selector
// compiler, with apimachinery's on arbitrary selectors: what it accepts,
// apimachinery accepts too (it never compiles an invalid selector), and it
// never panics.
func FuzzCompileSelector(f *testing.F) {
	f.Add("app", "web", "tier", "In", "a,b")
	f.Add("example.com/role", "", "env", "NotIn", "")
	f.Add("-bad", "v", "k", "Exists", "x")
	f.Add("a/b/c", "v", "k", "DoesNotExist", "")
	f.Add("k", strings.Repeat("v", 64), "k2", "Gt", "1")
	f.Fuzz(func(t *testing.T, key, value, exprKey, op, values string) {
		ls := &metav1.LabelSelector{}
		if key != "" {
			ls.MatchLabels = map[string]string{key: value}
		}
		if exprKey != "" {
			e := metav1.LabelSelectorRequirement{Key: exprKey, Operator: metav1.LabelSelectorOperator(op)}
			if values != "" {
				e.Values = strings.Split(values, ",")
			}
			ls.MatchExpressions = []metav1.LabelSelectorRequirement{e}
		}
		if _, ok := compileSelector(ls); ok {
			if _, err := metav1.LabelSelectorAsSelector(ls); err != nil {
				t.Fatalf("compileSelector accepts %+v, apimachinery refuses it: %v", ls, err)
			}
		}
	})
}
