package policyd

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/policy"
)

const rayCluster = `apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: default}
spec:
  size: 3
  configName: cfg
`

const rayPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ray, namespace: default}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: ray.io/v1, kind: RayCluster}]
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
`

func ricDoc(name, body string) string {
	return `apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {name: ` + name + `}
spec:
  target: {apiVersion: ray.io/v1, kind: RayCluster}
  customizations:
` + body
}

// Reference features §7.2-§7.4 through policyd: a customization applied
// after the template rebinds it with the script's components and
// dependencies; a second customization scripting the same operation is
// refused; a script error is the binding's InterpreterError, never the
// built-in reading; deleting the customization rebinds without it.
func TestCustomizationsInterpretTheirKindsBindings(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	for _, doc := range []string{rayCluster, rayPolicy, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: default}\ndata: {a: b}\n"} {
		if err := h.Handle(ctx, applied(t, doc)); err != nil {
			t.Fatal(err)
		}
	}
	type got struct {
		Replicas   int32
		Components []policy.Component
		Deps       []string
		Error      string
	}
	last := func() got {
		bs := bindings(rec)
		b := bs[len(bs)-1]
		g := got{Replicas: b.Replicas, Components: b.Components, Error: b.InterpreterError}
		for _, d := range b.Dependencies {
			g.Deps = append(g.Deps, d.Key.String())
		}
		return g
	}
	if diff := cmp.Diff(got{}, last()); diff != "" {
		t.Fatalf("an opaque custom resource (-want +got):\n%s", diff)
	}
	ric := ricDoc("ray", `    componentResource:
      luaScript: |
        function GetComponents(o) return {{name = "head", replicas = 1}, {name = "worker", replicas = o.spec.size}} end
    dependencyInterpretation:
      luaScript: |
        function GetDependencies(o) return {{apiVersion = "v1", kind = "ConfigMap", namespace = o.metadata.namespace, name = o.spec.configName}} end
`)
	if err := h.Handle(ctx, applied(t, ric)); err != nil {
		t.Fatal(err)
	}
	want := got{Components: []policy.Component{{Name: "head", Replicas: 1}, {Name: "worker", Replicas: 3}}, Deps: []string{"default/ConfigMap/cfg"}}
	if diff := cmp.Diff(want, last()); diff != "" {
		t.Errorf("with the customization (-want +got):\n%s", diff)
	}

	err := h.Handle(ctx, applied(t, ricDoc("ray2", "    componentResource: {luaScript: \"function GetComponents(o) return nil end\"}\n")))
	if err == nil || !strings.Contains(err.Error(), "conflicting with InterpreterOperation(InterpretComponent) of existing ResourceInterpreterCustomization(ray)") {
		t.Errorf("a second componentResource script: err = %v, want the conflict", err)
	}

	broken := ricDoc("ray", "    componentResource: {luaScript: \"function GetComponents(o) return o.spec.missing.x end\"}\n")
	if err := h.Handle(ctx, applied(t, broken)); err != nil {
		t.Fatal(err)
	}
	if g := last(); !strings.HasPrefix(g.Error, "ResourceInterpreterCustomization(ray) InterpretComponent: ") || g.Components != nil || g.Replicas != 0 {
		t.Errorf("a failing script: %+v, want its error and no components or replicas", g)
	}

	del, err := events.New(events.TypeObjectDeleted, "/test", "x", map[string]any{"apiVersion": policy.ConfigAPIVersion,
		"kind": policy.KindResourceInterpreterCustomization, "metadata": map[string]any{"name": "ray"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, del); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got{}, last()); diff != "" {
		t.Errorf("after deleting the customization (-want +got):\n%s", diff)
	}
}
