package policyd

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

const configMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {a: "1"}
`

var deploymentKey = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "my-app"}

func acceptedFor(r *eventstest.Recorder, key events.ObjectKey) []events.ObjectRecord {
	var out []events.ObjectRecord
	for _, p := range r.OfType(events.TypeObjectAccepted) {
		var rec events.ObjectRecord
		if events.Decode(p.Event, &rec) == nil && rec.Key == key {
			out = append(out, rec)
		}
	}
	return out
}

// A template a policy claims is answered with its binding alone, which
// carries the accepted generation; object.accepted answers only what no
// binding change says.
func TestAClaimedTemplateIsAcceptedByItsBindingAlone(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	must := func(e events.Event) {
		t.Helper()
		if err := h.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	must(applied(t, policyDoc("match-all", "", 0)))
	first := applied(t, deployment)
	must(first)
	bs := bindings(rec)
	if n := len(acceptedFor(rec, deploymentKey)); n != 0 || len(bs) != 1 {
		t.Fatalf("claimed template: %d object.accepted and %d bindings, want 0 and 1", n, len(bs))
	}
	if bs[0].Generation != 1 || bs[0].AcceptedAt.IsZero() || bs[0].TemplateRecord().Role != events.RoleTemplate {
		t.Fatalf("the binding must carry the accepted record: %+v", bs[0])
	}
	if got := events.CausationID(rec.OfType(events.TypeBindingChanged)[0].Event); got != first.ID() {
		t.Fatalf("the binding is caused by %q, want the applied event %q", got, first.ID())
	}
	// The same applied event delivered again (its ack was lost) has had its
	// answer, the binding: nothing more.
	before := len(rec.Events)
	must(first)
	if len(rec.Events) != before {
		t.Fatalf("a redelivered apply was answered again: %d new events", len(rec.Events)-before)
	}
	// Identical content: the binding does not change, so object.accepted answers.
	must(applied(t, deployment))
	acc := acceptedFor(rec, deploymentKey)
	if len(acc) != 1 || acc[0].Generation != 1 || len(bindings(rec)) != 1 || !acc[0].UpdatedAt.Equal(bs[0].AcceptedAt) {
		t.Fatalf("identical re-apply: accepted %+v, %d bindings", acc, len(bindings(rec)))
	}
	// A new generation: the binding again, no object.accepted.
	must(applied(t, strings.Replace(deployment, "replicas: 6", "replicas: 12", 1)))
	if bs = bindings(rec); len(bs) != 2 || bs[1].Generation != 2 || len(acceptedFor(rec, deploymentKey)) != 1 {
		t.Fatalf("new generation: bindings %+v, accepted %d", bs, len(acceptedFor(rec, deploymentKey)))
	}
	// A template no policy claims gets object.accepted.
	must(applied(t, configMap))
	if n := len(acceptedFor(rec, events.ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "settings"})); n != 1 {
		t.Fatalf("unclaimed ConfigMap: %d object.accepted, want 1", n)
	}
}

// After a restart policyd knows a claimed template from its binding: the
// same content is the same generation, a change the next one, and the CLI
// reads the same records.
func TestPolicydRebuildsAClaimedTemplateFromItsBinding(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	h := NewHandler(bus, "t", zap.NewNop())
	eight := applied(t, strings.Replace(deployment, "replicas: 6", "replicas: 8", 1))
	for _, e := range []events.Event{applied(t, policyDoc("match-all", "", 0)), applied(t, deployment), eight, applied(t, configMap)} {
		if err := h.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// A deleted template is gone after a restart, even though its binding
	// subject holds a removal after the object's.
	gone := strings.Replace(deployment, "name: my-app,", "name: gone,", 1)
	if err := h.Handle(ctx, applied(t, gone)); err != nil {
		t.Fatal(err)
	}
	del, _ := events.New(events.TypeObjectDeleted, "/test", "gone", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "gone", "namespace": "default"}})
	if err := h.Handle(ctx, del); err != nil {
		t.Fatal(err)
	}

	p, err := readPublished(ctx, bus)
	if err != nil {
		t.Fatal(err)
	}
	dep, ok := p.Records[deploymentKey]
	if !ok || dep.Generation != 2 || dep.Role != events.RoleTemplate || !strings.Contains(string(dep.Object), `"replicas":8`) || !p.Live[deploymentKey] {
		t.Fatalf("claimed template read back as %+v (found %v, live %v)", dep, ok, p.Live[deploymentKey])
	}
	if _, ok := p.Records[events.ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "settings"}]; !ok {
		t.Fatal("the unclaimed ConfigMap is missing")
	}
	goneKey := deploymentKey
	goneKey.Name = "gone"
	if _, ok := p.Records[goneKey]; ok || p.Live[goneKey] {
		t.Fatalf("a deleted template came back: live %v", p.Live[goneKey])
	}
	if len(p.Records) != 3 {
		t.Fatalf("records: %v", p.SortedRecords())
	}

	rec := &eventstest.Recorder{}
	d := &Daemon{deps: Deps{Bus: bus, Log: zap.NewNop()}, h: NewHandler(rec, "t", zap.NewNop())}
	if err := d.rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	// The apply that made generation 2, redelivered after the restart: its
	// binding answered it before the stop.
	if err := d.h.Handle(ctx, eight); err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != 0 {
		t.Fatalf("a redelivered apply was answered again after the restart: %d events", len(rec.Events))
	}
	if err := d.h.Handle(ctx, applied(t, strings.Replace(deployment, "replicas: 6", "replicas: 8", 1))); err != nil {
		t.Fatal(err)
	}
	acc := acceptedFor(rec, deploymentKey)
	if len(acc) != 1 || acc[0].Generation != 2 || len(bindings(rec)) != 0 {
		t.Fatalf("identical re-apply after restart: accepted %+v, %d bindings", acc, len(bindings(rec)))
	}
	if err := d.h.Handle(ctx, applied(t, strings.Replace(deployment, "replicas: 6", "replicas: 9", 1))); err != nil {
		t.Fatal(err)
	}
	if bs := bindings(rec); len(bs) != 1 || bs[0].Generation != 3 || bs[0].Revision != 3 {
		t.Fatalf("change after restart: %+v", bs)
	}
}

// A binding of an older generation than the template's record says nothing
// about the template: after its policy was deleted the template moved on
// (object.accepted generation 2), and a reschedule republished the old
// binding. A restart must not take the template back to generation 1.
func TestAnOlderBindingPublishedLaterDoesNotTakeTheTemplateBack(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	h := NewHandler(bus, "t", zap.NewNop())
	handle := func(e events.Event) {
		t.Helper()
		if err := h.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	handle(applied(t, policyDoc("match-all", "", 0)))
	handle(applied(t, deployment))
	del, _ := events.New(events.TypeObjectDeleted, "/test", "match-all", map[string]any{"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy", "metadata": map[string]any{"name": "match-all", "namespace": "default"}})
	handle(del)
	handle(applied(t, strings.Replace(deployment, "replicas: 6", "replicas: 9", 1)))
	resched, _ := events.New(events.TypeRescheduleRequested, "/test", "my-app", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "my-app", "namespace": "default"}})
	handle(resched)

	p, err := readPublished(ctx, bus)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Records[deploymentKey]; r.Generation != 2 || !strings.Contains(string(r.Object), `"replicas":9`) {
		t.Fatalf("record after a reschedule republished the generation-1 binding: generation %d, %s", r.Generation, r.Object)
	}
}
