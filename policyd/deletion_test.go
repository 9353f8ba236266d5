package policyd

import (
	"context"
	"slices"
	"testing"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

const widgetCRD = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n" +
	"spec:\n  group: example.com\n  scope: Namespaced\n  names: {plural: widgets, singular: widget, kind: Widget}\n" +
	"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n"

const widgetPolicy = "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: widgets, namespace: default}\n" +
	"spec:\n  resourceSelectors: [{apiVersion: example.com/v1, kind: Widget}, {apiVersion: other.example.com/v1, kind: Widget}]\n" +
	"  placement: {clusterAffinity: {clusterNames: [cluster1]}}\n"

func widget(group, name string) string {
	return "apiVersion: " + group + "/v1\nkind: Widget\nmetadata: {name: " + name + ", namespace: default}\nspec: {size: 1}\n"
}

func deletedCRD(t *testing.T) events.Event {
	t.Helper()
	e, err := events.New(events.TypeObjectDeleted, "/test", "x", map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "widgets.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestDeletingACRDRemovesItsCustomResources: the API server deletes a
// CustomResourceDefinition's custom resources with it. Flotilla kept them
// as templates of a kind no member served any more, and each Failed in
// every member. Now each is removed and its binding withdrawn; a Widget of
// another group stays. When a withdrawal fails, the redelivery of the
// deletion finishes the work.
func TestDeletingACRDRemovesItsCustomResources(t *testing.T) {
	pub := &failingOnce{fail: events.TypeBindingRemoved}
	h := NewHandler(pub, "t", zap.NewNop())
	ctx := context.Background()
	for _, d := range []string{widgetCRD, widgetPolicy, widget("example.com", "w1"), widget("example.com", "w2"), widget("other.example.com", "w3")} {
		if err := h.Handle(ctx, applied(t, d)); err != nil {
			t.Fatal(err)
		}
	}
	del := deletedCRD(t)
	if err := h.Handle(ctx, del); err == nil {
		t.Fatal("the deletion succeeded although a binding.removed failed to publish")
	}
	if err := h.Handle(ctx, del); err != nil {
		t.Fatalf("redelivery: %v", err)
	}
	w1 := events.ObjectKey{Group: "example.com", Kind: "Widget", Namespace: "default", Name: "w1"}
	w2 := events.ObjectKey{Group: "example.com", Kind: "Widget", Namespace: "default", Name: "w2"}
	w3 := events.ObjectKey{Group: "other.example.com", Kind: "Widget", Namespace: "default", Name: "w3"}
	if removed := keysOf(pub.OfType(events.TypeObjectRemoved)); !slices.Contains(removed, w1) || !slices.Contains(removed, w2) || slices.Contains(removed, w3) {
		t.Errorf("removed %v, want w1 and w2 and not w3", removed)
	}
	if withdrawn := keysOf(pub.OfType(events.TypeBindingRemoved)); !slices.Contains(withdrawn, w1) || !slices.Contains(withdrawn, w2) || slices.Contains(withdrawn, w3) {
		t.Errorf("bindings withdrawn %v, want w1's and w2's and not w3's", withdrawn)
	}
	for _, k := range []events.ObjectKey{w1, w2} {
		if _, ok := h.st.records[k]; ok {
			t.Errorf("%s is still a template", k)
		}
	}
	if _, ok := h.st.records[w3]; !ok {
		t.Errorf("%s, of another group, was removed", w3)
	}
}

func keysOf(ps []eventstest.Published) []events.ObjectKey {
	var out []events.ObjectKey
	for _, p := range ps {
		var r struct {
			Key events.ObjectKey `json:"key"`
		}
		if events.Decode(p.Event, &r) == nil {
			out = append(out, r.Key)
		}
	}
	return out
}
