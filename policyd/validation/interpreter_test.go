package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events/policy"
)

const ricHead = `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: worker
spec:
`

// TestInterpreterRules holds ResourceInterpreterCustomization validation
// to reference features §7.4, one case per rule.
func TestInterpreterRules(t *testing.T) {
	tests := []struct {
		name string
		src  string
		errs []want
	}{
		{
			name: "a customization whose scripts compile is accepted; an empty script is accepted as no hook",
			src: ricHead + `  target: {apiVersion: acme.dev/v1, kind: Worker}
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(o)
          return o.spec.size or 0, nil
        end
    healthInterpretation:
      luaScript: ""
`,
		},
		{
			name: "§7.4.1: target and customizations are required",
			src:  ricHead + "  target: {}\n",
			errs: []want{{1, 5, "spec.customizations", "required value"}, {1, 6, "spec.target.apiVersion", "required value"}, {1, 6, "spec.target.kind", "required value"}},
		},
		{
			name: "§7.4.1: a member without luaScript is refused",
			src:  ricHead + "  target: {apiVersion: acme.dev/v1, kind: Worker}\n  customizations:\n    retention: {}\n",
			errs: []want{{1, 8, "spec.customizations.retention.luaScript", "required value"}},
		},
		{
			name: "§7.4.3: a block script that does not compile is refused at the file line of its error",
			src: ricHead + `  target: {apiVersion: acme.dev/v1, kind: Worker}
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(o)
          return o.spec.size // 2
        end
`,
			errs: []want{{1, 11, "spec.customizations.replicaResource.luaScript", "InterpreterOperation(InterpretReplica) Lua script error: script line 2:"}},
		},
		{
			name: "§7.4.3: an inline script that does not compile is refused at its line",
			src:  ricHead + "  target: {apiVersion: acme.dev/v1, kind: Worker}\n  customizations:\n    statusReflection: {luaScript: \"function ReflectStatus(m) return {\"}\n",
			errs: []want{{1, 8, "spec.customizations.statusReflection.luaScript", "InterpreterOperation(InterpretStatus) Lua script error"}},
		},
		{
			name: "§7.4.3: function names are not checked",
			src:  ricHead + "  target: {apiVersion: acme.dev/v1, kind: Worker}\n  customizations:\n    statusReflection: {luaScript: \"function Anything() end\"}\n",
		},
		{
			name: "an unknown customization member is refused",
			src:  ricHead + "  target: {apiVersion: acme.dev/v1, kind: Worker}\n  customizations:\n    replicas: {luaScript: \"\"}\n",
			errs: []want{{1, 8, "spec.customizations.replicas", "unknown field"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := loadString(tt.src)
			checkProblems(t, "errors", res.Errors, tt.errs)
		})
	}
}

func TestConflictingInterpreter(t *testing.T) {
	mk := func(name, kind string, c policy.Customizations) policy.ResourceInterpreterCustomization {
		return policy.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: policy.InterpreterSpec{Target: policy.InterpreterTarget{APIVersion: "acme.dev/v1", Kind: kind}, Customizations: c}}
	}
	s := func(x string) *policy.LuaHook { return &policy.LuaHook{LuaScript: x} }
	existing := []policy.ResourceInterpreterCustomization{
		mk("a", "Worker", policy.Customizations{ReplicaResource: s("x"), DependencyInterpretation: s("d"), HealthInterpretation: s("")}),
		mk("b", "Other", policy.Customizations{StatusReflection: s("x")}),
	}
	cases := []struct {
		name string
		ric  policy.ResourceInterpreterCustomization
		want []Problem
	}{
		{"two scripts for one operation of one target conflict", mk("c", "Worker", policy.Customizations{ReplicaResource: s("y")}),
			[]Problem{{Field: "spec.customizations.replicaResource.luaScript", Reason: "conflicting with InterpreterOperation(InterpretReplica) of existing ResourceInterpreterCustomization(a)"}}},
		{"dependency scripts never conflict", mk("c", "Worker", policy.Customizations{DependencyInterpretation: s("e")}), nil},
		{"an empty script does not conflict", mk("c", "Worker", policy.Customizations{HealthInterpretation: s("h")}), nil},
		{"another target does not conflict", mk("c", "Other", policy.Customizations{ReplicaResource: s("y")}), nil},
		{"a customization updating itself does not conflict", mk("a", "Worker", policy.Customizations{ReplicaResource: s("z")}), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, ConflictingInterpreter(c.ric, existing)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnknownKind(t *testing.T) {
	cases := []struct {
		name, apiVersion, kind string
		want                   bool
	}{
		{"a CustomResourceDefinition is known though k8s.io/api lacks it", "apiextensions.k8s.io/v1", "CustomResourceDefinition", false},
		{"a built-in kind is known", "apps/v1", "Deployment", false},
		{"a custom resource is unknown", "ray.io/v1", "RayCluster", true},
		{"a typo is unknown", "app/v1", "Deployment", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, _ := UnknownKind(c.apiVersion, c.kind); got != c.want {
				t.Errorf("unknown = %v, want %v", got, c.want)
			}
		})
	}
}
