package binding

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Reference features §3.1 and §7.2: what Interpret writes into a binding.
func TestInterpret(t *testing.T) {
	obj := map[string]any{"apiVersion": "acme.dev/v1", "kind": "Worker", "metadata": map[string]any{"name": "w", "namespace": "ns"},
		"spec": map[string]any{"size": 4.0}}
	comps := func(list string) *policy.Interpretation {
		return &policy.Interpretation{Names: []string{"w"}, ComponentResource: "function GetComponents(o) return " + list + " end",
			ReplicaResource: "function GetReplicas(o) return 99 end"}
	}
	type got struct {
		Replicas   int32
		Components []policy.Component
		Error      string
		Deps       []string
	}
	cases := []struct {
		name   string
		interp *policy.Interpretation
		deps   bool
		want   got
	}{
		{"no customization: the built-in reading stands", nil, false, got{}},
		{"replicas from the replicaResource script", &policy.Interpretation{Names: []string{"w"}, ReplicaResource: "function GetReplicas(o) return o.spec.size end"}, false, got{Replicas: 4}},
		{"components win over replicas, which stay empty", comps(`{{name = "a", replicas = 1}, {name = "b", replicas = 2}}`), false,
			got{Components: []policy.Component{{Name: "a", Replicas: 1}, {Name: "b", Replicas: 2}}}},
		{"an empty component name is refused", comps(`{{name = "", replicas = 1}}`), false,
			got{Error: "ResourceInterpreterCustomization(w) InterpretComponent: component names must be non-empty"}},
		{"a repeated component name is refused", comps(`{{name = "a", replicas = 1}, {name = "a", replicas = 1}}`), false,
			got{Error: "ResourceInterpreterCustomization(w) InterpretComponent: component names must be unique"}},
		{"a negative component count is refused", comps(`{{name = "head", replicas = 1}, {name = "work", replicas = -2}}`), false,
			got{Error: `ResourceInterpreterCustomization(w) InterpretComponent: component "work" has -2 replicas: must not be negative`}},
		{"dependencies run only for propagateDeps", &policy.Interpretation{Names: []string{"w"},
			Dependencies: []string{`function GetDependencies(o) return {{apiVersion = "v1", kind = "Secret", namespace = "ns", name = "s"}} end`}}, true,
			got{Deps: []string{"Secret/s"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmpl := NewTemplate(events.ObjectRecord{Key: events.ObjectKey{Group: "acme.dev", Kind: "Worker", Namespace: "ns", Name: "w"}, APIVersion: "acme.dev/v1"}, obj)
			var b events.Binding
			deps, _ := Interpret(&b, tmpl, c.interp, c.deps)
			g := got{Replicas: b.Replicas, Components: b.Components, Error: b.InterpreterError}
			for _, d := range deps {
				g.Deps = append(g.Deps, d.Kind+"/"+d.Name)
			}
			if diff := cmp.Diff(c.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
