package policyd

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

func applied(t *testing.T, doc string) events.Event {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	e, err := events.New(events.TypeObjectApplied, "/test", "x", obj)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: my-app, namespace: default, labels: {app: my-app}}
spec:
  replicas: 6
  selector: {matchLabels: {app: my-app}}
  template:
    metadata: {labels: {app: my-app}}
    spec: {containers: [{name: web, image: nginx:1.25.3, resources: {requests: {cpu: 250m}}}]}
`

func policyDoc(name, selector string, priority int) string {
	return `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: ` + name + `, namespace: default}
spec:
  priority: ` + string(rune('0'+priority)) + `
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment` + selector + `}]
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
`
}

func bindings(r *eventstest.Recorder) []events.Binding {
	var out []events.Binding
	for _, p := range r.OfType(events.TypeBindingChanged) {
		var b events.Binding
		_ = json.Unmarshal(p.Event.Data(), &b)
		out = append(out, b)
	}
	return out
}

func TestTemplateIsBoundOnceItsPolicyArrivesAndRebindsOnlyOnChange(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	if err := h.Handle(ctx, applied(t, deployment)); err != nil {
		t.Fatal(err)
	}
	if n := len(bindings(rec)); n != 0 {
		t.Fatalf("a template with no policy got %d bindings", n)
	}
	if err := h.Handle(ctx, applied(t, policyDoc("match-all", "", 0))); err != nil {
		t.Fatal(err)
	}
	bs := bindings(rec)
	if len(bs) != 1 || bs[0].Policy.Name != "match-all" || bs[0].Replicas != 6 || bs[0].ReplicaRequirements.Cpu().String() != "250m" || bs[0].Revision != 1 {
		t.Fatalf("binding after the policy: %+v", bs)
	}
	// Re-applying identical content changes nothing.
	_ = h.Handle(ctx, applied(t, deployment))
	if n := len(bindings(rec)); n != 1 {
		t.Fatalf("identical re-apply produced %d bindings", n)
	}
	// Scaling the template is a new generation and a new revision.
	_ = h.Handle(ctx, applied(t, strings.Replace(deployment, "replicas: 6", "replicas: 12", 1)))
	bs = bindings(rec)
	if len(bs) != 2 || bs[1].Generation != 2 || bs[1].Revision != 2 || bs[1].Replicas != 12 {
		t.Fatalf("after scaling: %+v", bs[len(bs)-1])
	}
}

func TestClaimedTemplateKeepsItsPolicyUntilPreemption(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	_ = h.Handle(ctx, applied(t, deployment))
	_ = h.Handle(ctx, applied(t, policyDoc("by-label", ", labelSelector: {matchLabels: {app: my-app}}", 0)))
	// A more specific (by name) policy arriving later does not take the template over.
	_ = h.Handle(ctx, applied(t, policyDoc("by-name", ", name: my-app", 0)))
	bs := bindings(rec)
	if last := bs[len(bs)-1]; last.Policy.Name != "by-label" {
		t.Fatalf("claimed template moved to %s", last.Policy.Name)
	}
	// With preemption Always and a higher priority it does.
	pre := strings.Replace(policyDoc("preempting", ", name: my-app", 5), "spec:\n", "spec:\n  preemption: Always\n", 1)
	if err := h.Handle(ctx, applied(t, pre)); err != nil {
		t.Fatal(err)
	}
	bs = bindings(rec)
	if last := bs[len(bs)-1]; last.Policy.Name != "preempting" {
		t.Fatalf("preemption did not move the template: %s", last.Policy.Name)
	}
}

// Karmada drops a claim when its policy no longer selects the template:
// when the template's labels change so that no policy selects it, and
// later so that its old policy and a higher-priority one both do, the
// higher-priority one claims it; the old policy did not keep a claim it
// had lost.
func TestAClaimLapsesWhenItsPolicyNoLongerSelectsTheTemplate(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	labelled := func(labels string) string {
		return strings.Replace(deployment, "labels: {app: my-app}}", "labels: {"+labels+"}}", 1)
	}
	for _, doc := range []string{
		policyDoc("by-app", ", labelSelector: {matchLabels: {app: my-app}}", 0),
		policyDoc("gold", ", labelSelector: {matchLabels: {tier: gold}}", 5),
		deployment,                          // by-app claims it
		labelled("app: other"),              // no policy selects it: the claim lapses
		labelled("app: my-app, tier: gold"), // both select it: gold's priority wins
	} {
		if err := h.Handle(ctx, applied(t, doc)); err != nil {
			t.Fatal(err)
		}
	}
	bs := bindings(rec)
	if len(bs) < 2 || bs[0].Policy.Name != "by-app" {
		t.Fatalf("bindings: %+v", bs)
	}
	if last := bs[len(bs)-1]; last.Policy.Name != "gold" {
		t.Fatalf("a lapsed claim was kept by %s, which selected the template again, over the higher-priority gold", last.Policy.Name)
	}
}

func TestUnclaimedTemplatePicksTheMostSpecificPolicy(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	_ = h.Handle(ctx, applied(t, policyDoc("b-match-all", "", 0)))
	_ = h.Handle(ctx, applied(t, policyDoc("z-by-name", ", name: my-app", 0)))
	_ = h.Handle(ctx, applied(t, policyDoc("a-by-label", ", labelSelector: {matchLabels: {app: my-app}}", 0)))
	_ = h.Handle(ctx, applied(t, deployment))
	bs := bindings(rec)
	if len(bs) != 1 || bs[0].Policy.Name != "z-by-name" {
		t.Fatalf("want the name match to win over label selector and match-all: %+v", bs)
	}
}

// A policy's spec is encoded once for all its templates; a changed policy
// is encoded afresh, so that no binding carries the spec it had before.
func TestABindingCarriesItsPolicysSpecAsItIsNow(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	other := strings.NewReplacer("name: my-app,", "name: other,", "app: my-app", "app: other").Replace(deployment)
	for _, d := range []string{policyDoc("p", "", 0), deployment, other, strings.Replace(policyDoc("p", "", 0), "[cluster1]", "[cluster2]", 1)} {
		if err := h.Handle(ctx, applied(t, d)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, b := range bindings(rec) {
		got = append(got, b.Key.Name+":"+strings.Join(b.Spec.Placement.ClusterAffinity.ClusterNames, ","))
	}
	want := []string{"my-app:cluster1", "other:cluster1", "my-app:cluster2", "other:cluster2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bindings' clusterNames (-want +got):\n%s", diff)
	}
}

func TestMalformedPolicyIsRejectedWithItsFieldPath(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	bad := strings.Replace(policyDoc("bad", "", 0), "clusterAffinity", "clusterAfinity", 1)
	err := h.Handle(context.Background(), applied(t, bad))
	if !events.IsPermanent(err) || !strings.Contains(err.Error(), "spec.placement.clusterAfinity") {
		t.Fatalf("err = %v", err)
	}
	rej := rec.OfType(events.TypeObjectRejected)
	if len(rej) != 1 || len(rec.OfType(events.TypeObjectAccepted)) != 0 {
		t.Fatalf("rejections %d, accepted %d", len(rej), len(rec.OfType(events.TypeObjectAccepted)))
	}
}

func TestPlainCredentialsFromTheBusAreRefused(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	err := h.Handle(context.Background(), applied(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: k, namespace: karmada-system}\nstringData: {kubeconfig: x}\n"))
	if !events.IsPermanent(err) || !strings.Contains(err.Error(), "sealed") {
		t.Fatalf("err = %v", err)
	}
}

func TestAResourceBindingFromTheBusIsRejectedNotTakenForATemplate(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	err := h.Handle(context.Background(), applied(t, "apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: my-app-deployment, namespace: default}\n"+
		"spec: {resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: my-app}}\n"))
	if !events.IsPermanent(err) || !strings.Contains(err.Error(), "kind: ResourceBinding is a placement Flotilla decides") {
		t.Fatalf("err = %v", err)
	}
	if rej, acc := len(rec.OfType(events.TypeObjectRejected)), len(rec.OfType(events.TypeObjectAccepted)); rej != 1 || acc != 0 {
		t.Fatalf("rejections %d, accepted %d; want 1 and 0", rej, acc)
	}
}

func TestOverridesAreOrderedClusterScopedFirstThenBySpecificityAndName(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	op := func(kind, name, ns, sel string) string {
		md := "{name: " + name + "}"
		if ns != "" {
			md = "{name: " + name + ", namespace: " + ns + "}"
		}
		return "apiVersion: policy.karmada.io/v1alpha1\nkind: " + kind + "\nmetadata: " + md + "\nspec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment" + sel + "}]\n  overrideRules: [{overriders: {labelsOverrider: [{operator: add, value: {x: " + name + "}}]}}]\n"
	}
	for _, d := range []string{deployment, policyDoc("p", "", 0),
		op("OverridePolicy", "b-name", "default", ", name: my-app"), op("OverridePolicy", "a-name", "default", ", name: my-app"),
		op("OverridePolicy", "z-all", "default", ""), op("ClusterOverridePolicy", "cluster-wide", "", ""), op("OverridePolicy", "other-ns", "team", "")} {
		if err := h.Handle(ctx, applied(t, d)); err != nil {
			t.Fatal(err)
		}
	}
	bs := bindings(rec)
	var names []string
	for _, o := range bs[len(bs)-1].Overrides {
		names = append(names, o.Name)
	}
	if got := strings.Join(names, ","); got != "cluster-wide,z-all,a-name,b-name" {
		t.Fatalf("override order %s", got)
	}
}

func TestRescheduleRequestRepublishesTheBindingWithItsTime(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	_ = h.Handle(ctx, applied(t, deployment))
	_ = h.Handle(ctx, applied(t, policyDoc("p", "", 0)))
	req, err := events.New(events.TypeRescheduleRequested, "/test", "x", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "my-app", "namespace": "default"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, req); err != nil {
		t.Fatal(err)
	}
	bs := bindings(rec)
	last := bs[len(bs)-1]
	if len(bs) != 2 || last.RescheduleRequestedAt == nil || last.Revision != 2 || last.Generation != 1 {
		t.Fatalf("after reschedule: %+v", last)
	}
	unknown, _ := events.New(events.TypeRescheduleRequested, "/test", "x", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "nope", "namespace": "default"}})
	if err := h.Handle(ctx, unknown); !events.IsPermanent(err) {
		t.Fatalf("reschedule of an unclaimed template: %v", err)
	}
}

// Deleting a Cluster publishes a deregistration with the next generation
// (a tombstone consumers hold stale registrations against), and the same
// cluster applied again continues after it.
func TestAClusterAppliedAgainAfterDeletionContinuesItsGenerations(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	cluster := "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: cluster1}\nspec: {apiEndpoint: 'https://127.0.0.1:6443', region: r1}\n"
	if err := h.Handle(ctx, applied(t, cluster)); err != nil {
		t.Fatal(err)
	}
	del, err := events.New(events.TypeObjectDeleted, "/test", "x", map[string]any{"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": map[string]any{"name": "cluster1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, del); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, applied(t, strings.Replace(cluster, "region: r1", "region: r2", 1))); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rec.Events {
		switch events.Type(p.Event.Type()) {
		case events.TypeClusterRegistered, events.TypeClusterDeregistered:
			var r events.ClusterRegistration
			_ = json.Unmarshal(p.Event.Data(), &r)
			got = append(got, strings.TrimPrefix(p.Event.Type(), "io.flotilla.cluster.")+"@"+string(rune('0'+r.Generation)))
		}
	}
	if strings.Join(got, " ") != "registered.v1@1 deregistered.v1@2 registered.v1@3" {
		t.Fatalf("registrations: %v", got)
	}
}

// failingOnce fails the first publish of one event type, as a publish
// that times out does, and records the rest.
type failingOnce struct {
	eventstest.Recorder
	fail events.Type
}

func (f *failingOnce) Publish(ctx context.Context, subject string, e events.Event) error {
	if events.Type(e.Type()) == f.fail {
		f.fail = ""
		return errTimeout
	}
	return f.Recorder.Publish(ctx, subject, e)
}

var errTimeout = errors.New("nats: timeout")

// TestADeletionWhoseEffectFailedPublishesItOnRedelivery: when a deletion's
// effect (a template's binding.removed, a cluster's deregistration, the
// templates a deleted policy claimed bound again) fails to publish, the
// handler fails and its redelivery publishes it. It used to forget the
// object first, so the redelivery found nothing and answered: the binding
// stayed live and the workload on its members.
func TestADeletionWhoseEffectFailedPublishesItOnRedelivery(t *testing.T) {
	cluster := "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: cluster1}\nspec: {apiEndpoint: 'https://127.0.0.1:6443'}\n"
	for _, c := range []struct {
		what, deleted string
		fails         events.Type
		want          func(*eventstest.Recorder) bool
	}{
		{"a template", `{apiVersion: apps/v1, kind: Deployment, metadata: {name: my-app, namespace: default}}`, events.TypeBindingRemoved,
			func(r *eventstest.Recorder) bool { return len(r.OfType(events.TypeBindingRemoved)) == 1 }},
		{"a cluster", `{apiVersion: cluster.karmada.io/v1alpha1, kind: Cluster, metadata: {name: cluster1}}`, events.TypeClusterDeregistered,
			func(r *eventstest.Recorder) bool { return len(r.OfType(events.TypeClusterDeregistered)) == 1 }},
		{"an override the binding carried", `{apiVersion: policy.karmada.io/v1alpha1, kind: OverridePolicy, metadata: {name: o, namespace: default}}`, events.TypeBindingChanged,
			func(r *eventstest.Recorder) bool {
				bs := bindings(r)
				return len(bs) > 0 && len(bs[len(bs)-1].Overrides) == 0
			}},
	} {
		t.Run(c.what, func(t *testing.T) {
			pub := &failingOnce{}
			h := NewHandler(pub, "t", zap.NewNop())
			ctx := context.Background()
			override := "apiVersion: policy.karmada.io/v1alpha1\nkind: OverridePolicy\nmetadata: {name: o, namespace: default}\nspec:\n  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]\n  overrideRules: [{overriders: {imageOverrider: [{component: Registry, operator: replace, value: r.example.com}]}}]\n"
			for _, d := range []string{policyDoc("p", "", 0), override, deployment, cluster} {
				if err := h.Handle(ctx, applied(t, d)); err != nil {
					t.Fatal(err)
				}
			}
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(c.deleted), &obj); err != nil {
				t.Fatal(err)
			}
			del, err := events.New(events.TypeObjectDeleted, "/test", "x", obj)
			if err != nil {
				t.Fatal(err)
			}
			pub.fail = c.fails
			if err := h.Handle(ctx, del); !errors.Is(err, errTimeout) || events.IsPermanent(err) {
				t.Fatalf("first delivery: %v, want the publish's error, to be retried", err)
			}
			if err := h.Handle(ctx, del); err != nil {
				t.Fatalf("redelivery: %v", err)
			}
			if !c.want(&pub.Recorder) {
				t.Errorf("after the redelivery: %d binding.removed, %d deregistered; want the effect published once",
					len(pub.OfType(events.TypeBindingRemoved)), len(pub.OfType(events.TypeClusterDeregistered)))
			}
		})
	}
}

// TestACustomResourceFromTheBusGetsTheDefaultNamespaceOfItsNamespacedKind:
// published without the CLI, a Widget naming no namespace whose accepted
// CustomResourceDefinition is Namespaced is accepted in default, as a
// built-in kind is; it was taken for cluster-scoped.
func TestACustomResourceFromTheBusGetsTheDefaultNamespaceOfItsNamespacedKind(t *testing.T) {
	h := NewHandler(&eventstest.Recorder{}, "t", zap.NewNop())
	ctx := context.Background()
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n" +
		"spec:\n  group: example.com\n  scope: Namespaced\n  names: {plural: widgets, singular: widget, kind: Widget}\n" +
		"  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n"
	for _, d := range []string{crd, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1}\n"} {
		if err := h.Handle(ctx, applied(t, d)); err != nil {
			t.Fatal(err)
		}
	}
	want := events.ObjectKey{Group: "example.com", Kind: "Widget", Namespace: "default", Name: "w1"}
	if _, ok := h.st.records[want]; !ok {
		t.Errorf("no record %s; have %v", want, slices.Collect(maps.Keys(h.st.records)))
	}
}

// TestAnUpdateOfAnImmutableFieldIsRejectedWithItsPath: a Deployment whose
// selector changes, or a Job whose pod template changes, is refused as
// the API server refuses it; it was accepted and Failed in every member.
// A change of a mutable field passes.
func TestAnUpdateOfAnImmutableFieldIsRejectedWithItsPath(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	if err := h.Handle(ctx, applied(t, deployment)); err != nil {
		t.Fatal(err)
	}
	reselected := strings.ReplaceAll(deployment, "{app: my-app}", "{app: my-app, tier: web}")
	err := h.Handle(ctx, applied(t, reselected))
	if err == nil || !events.IsPermanent(err) || !strings.Contains(err.Error(), "spec.selector: field is immutable") {
		t.Errorf("a changed selector: %v, want it rejected, naming spec.selector", err)
	}
	if rs := rec.OfType(events.TypeObjectRejected); len(rs) != 1 {
		t.Errorf("%d rejection(s) published, want 1", len(rs))
	}
	if err := h.Handle(ctx, applied(t, strings.Replace(deployment, "replicas: 6", "replicas: 8", 1))); err != nil {
		t.Errorf("a changed replica count: %v, want it accepted", err)
	}
	job := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: once, namespace: default}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: busybox:1}]\n"
	if err := h.Handle(ctx, applied(t, job)); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, applied(t, strings.Replace(job, "busybox:1", "busybox:2", 1))); err == nil || !strings.Contains(err.Error(), "spec.template: field is immutable") {
		t.Errorf("a Job's changed image: %v, want it rejected, naming spec.template", err)
	}
}

// A Secret hubd took for a template, until a Cluster named it and hubd
// sealed it, stops being a template: its binding is withdrawn (its plain
// copies leave the members) and it is kept as credentials.
func TestASecretTemplateThatBecomesCredentialsIsUnbound(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	for _, doc := range []string{
		"apiVersion: v1\nkind: Secret\nmetadata: {name: member2, namespace: default}\nstringData: {token: plain}\n",
		"apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: secrets, namespace: default}\nspec:\n  resourceSelectors: [{apiVersion: v1, kind: Secret}]\n  placement: {clusterAffinity: {clusterNames: [cluster1]}}\n",
	} {
		if err := h.Handle(ctx, applied(t, doc)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(bindings(rec)); n != 1 {
		t.Fatalf("the Secret template has %d bindings, want 1", n)
	}
	sealed, err := events.New(events.TypeSecretSealed, "/test", "default/Secret/member2",
		events.SealedSecret{Namespace: "default", Name: "member2", KeyID: "k", Data: map[string][]byte{"token": []byte("sealed")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(ctx, sealed); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.OfType(events.TypeBindingRemoved)); n != 1 {
		t.Fatalf("binding.removed published %d times, want once", n)
	}
	key := events.ObjectKey{Kind: "Secret", Namespace: "default", Name: "member2"}
	if r := h.st.records[key]; r.Role != events.RoleCredentials || r.Generation != 2 {
		t.Fatalf("record: role %s generation %d, want credentials at generation 2", r.Role, r.Generation)
	}
	if _, ok := h.st.secrets["default/member2"]; !ok {
		t.Fatal("the sealed Secret is not kept as credentials")
	}
}
