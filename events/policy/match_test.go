package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/selection"
)

func TestSelectionOperator(t *testing.T) {
	type result struct {
		Op selection.Operator
		OK bool
	}
	tests := []struct {
		name    string
		op      string
		numeric bool
		want    result
	}{
		{"In is shared by label and node selectors", "In", false, result{selection.In, true}},
		{"NotIn is shared by label and node selectors", "NotIn", false, result{selection.NotIn, true}},
		{"Exists is shared by label and node selectors", "Exists", false, result{selection.Exists, true}},
		{"DoesNotExist is shared by label and node selectors", "DoesNotExist", false, result{selection.DoesNotExist, true}},
		{"Gt is a node-selector operator", "Gt", true, result{selection.GreaterThan, true}},
		{"Lt is a node-selector operator", "Lt", true, result{selection.LessThan, true}},
		{"Gt is refused in a label selector", "Gt", false, result{"", false}},
		{"Lt is refused in a label selector", "Lt", false, result{"", false}},
		{"an unknown operator is refused", "Equals", true, result{"", false}},
		{"operators are case-sensitive", "in", true, result{"", false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, ok := SelectionOperator(tt.op, tt.numeric)
			if diff := cmp.Diff(tt.want, result{op, ok}); diff != "" {
				t.Errorf("SelectionOperator(%q, %v) mismatch (-want +got):\n%s", tt.op, tt.numeric, diff)
			}
		})
	}
}
