package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ric(name, apiVersion, kind string, c Customizations) ResourceInterpreterCustomization {
	return ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: InterpreterSpec{Target: InterpreterTarget{APIVersion: apiVersion, Kind: kind}, Customizations: c}}
}

// TestMerge holds Merge to reference features §7.3.
func TestMerge(t *testing.T) {
	hook := func(s string) *LuaHook { return &LuaHook{LuaScript: s} }
	cases := []struct {
		name string
		rics []ResourceInterpreterCustomization
		want *Interpretation
	}{
		{"no customization for the kind is no interpretation", []ResourceInterpreterCustomization{
			ric("a", "acme.dev/v1", "Other", Customizations{ReplicaResource: hook("r")}),
		}, nil},
		{"an empty script is no hook", []ResourceInterpreterCustomization{
			ric("a", "acme.dev/v1", "Worker", Customizations{ReplicaResource: hook("")}),
		}, nil},
		{"the target must match exactly, version included", []ResourceInterpreterCustomization{
			ric("a", "acme.dev/v2", "Worker", Customizations{ReplicaResource: hook("r")}),
		}, nil},
		{"sorted by name, the first non-empty script of each operation wins; every dependency script is kept", []ResourceInterpreterCustomization{
			ric("b", "acme.dev/v1", "Worker", Customizations{ReplicaResource: hook("r-b"), HealthInterpretation: hook("h-b"), DependencyInterpretation: hook("d-b")}),
			ric("a", "acme.dev/v1", "Worker", Customizations{ReplicaResource: hook(""), StatusReflection: hook("s-a"), DependencyInterpretation: hook("d-a")}),
			ric("c", "acme.dev/v1", "Worker", Customizations{ReplicaResource: hook("r-c"), ComponentResource: hook("c-c")}),
		}, &Interpretation{Names: []string{"a", "b", "c"}, ReplicaResource: "r-b", StatusReflection: "s-a", Health: "h-b",
			ComponentResource: "c-c", Dependencies: []string{"d-a", "d-b"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Merge(c.rics, "acme.dev/v1", "Worker")
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
