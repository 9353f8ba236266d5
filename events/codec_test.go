package events

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events/policy"
)

// The codec must write the bytes encoding/json writes and read back what it
// reads: placements are compared, fingerprinted and shown byte for byte.
func TestCodecMatchesEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.UTC)
	weight := int32(7)
	binding := &Binding{
		Key: ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "bench", Name: "app-1"}, APIVersion: "apps/v1", Generation: 3, Revision: 9,
		Template:            json.RawMessage(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app-1"},"spec":{"replicas":12}}`),
		Replicas:            12,
		ReplicaRequirements: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi"), "nvidia.com/gpu": resource.MustParse("1")},
		Policy:              &PolicyRef{Kind: "PropagationPolicy", Namespace: "bench", Name: "bench"},
		Spec: &policy.PropagationSpec{Priority: &weight, Placement: policy.Placement{
			ClusterAffinity: &policy.ClusterAffinity{ClusterNames: []string{"b", "a"}},
			ReplicaScheduling: &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: "Divided", ReplicaDivisionPreference: "Weighted",
				WeightPreference: &policy.ClusterPreferences{DynamicWeight: "AvailableReplicas"}}}},
		RescheduleRequestedAt: &at,
	}
	cases := map[string]any{
		"a placement with its binding": PlacementDecision{Key: binding.Key, Generation: 3, BindingRevision: 9, Scheduled: true,
			Clusters: []TargetCluster{{Name: "a", Replicas: 5}, {Name: "b", Replicas: 7}}, Feasible: []string{"a", "b"},
			Diagnosis: map[string][]string{"z": {"TaintToleration: cluster(s) had untolerated taint {x: <y> & z}"}, "c": {"ClusterAffinity: no"}},
			Scores:    ScoresOf(map[string]int64{"b": 100, "a": -3}), Division: "Webster 12 by weights 1:1 → 5/7", Binding: binding, DecidedAt: at,
			Evictions: []Eviction{{Cluster: "c", Reason: EvictTaintUntolerated, PurgeMode: PurgeGracefully, EvictedAt: at}}},
		"an object with HTML, unicode and control characters": map[string]any{"s": "<a href=\"x\">&amp;</a> ü 日本 \u2028\u2029 \x01 \t", "k<": true},
		"numbers":       map[string]any{"int": 12, "big": int64(math.MaxInt64), "float": 1.5, "tiny": 1e-7, "large": 1e21, "neg": -0.25, "whole": 3.0},
		"nil things":    map[string]any{"nilmap": map[string]any(nil), "nilslice": []string(nil), "empty": []string{}, "null": nil},
		"a raw message": json.RawMessage(`{"compact":[1,2]}`),
	}
	for name, v := range cases {
		want, werr := json.Marshal(v)
		got, gerr := MarshalJSON(v)
		if (werr != nil) != (gerr != nil) || string(want) != string(got) {
			t.Errorf("%s:\nencoding/json %s (%v)\ncodec         %s (%v)", name, want, werr, got, gerr)
		}
	}
	// The one difference: a Marshaler's JSON is validated, not re-compacted.
	if got, err := MarshalJSON(map[string]any{"raw": json.RawMessage(` {"a" : 1} `)}); err != nil || string(got) != `{"raw": {"a" : 1} }` {
		t.Errorf("a raw message is written as is: %s (%v)", got, err)
	}
	if _, err := MarshalJSON(map[string]any{"raw": json.RawMessage(`{"a":`)}); err == nil {
		t.Errorf("an invalid raw message must be refused")
	}
	// Reading back.
	raw, _ := json.Marshal(cases["a placement with its binding"])
	var a, b PlacementDecision
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	if err := UnmarshalJSON(raw, &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) || !reflect.DeepEqual(a.Clusters, b.Clusters) || !b.DecidedAt.Equal(at) {
		t.Fatalf("decoded differently:\n%s\n%s", ja, jb)
	}
	var m1, m2 map[string]any
	_ = json.Unmarshal([]byte(`{"n":12,"f":1.5,"s":"x","l":[1,"a",null],"o":{"p":true}}`), &m1)
	if err := UnmarshalJSON([]byte(`{"n":12,"f":1.5,"s":"x","l":[1,"a",null],"o":{"p":true}}`), &m2); err != nil || !reflect.DeepEqual(m1, m2) {
		t.Fatalf("generic decode differs: %v vs %v (%v)", m1, m2, err)
	}
	// Invalid JSON is an error, as with encoding/json; invalid UTF-8 in a
	// string reads as encoding/json reads it.
	for _, bad := range []string{`{"a":`, `{"a":1,}`, `[1 2]`, `{"a":tru}`} {
		var x any
		if err := UnmarshalJSON([]byte(bad), &x); err == nil {
			t.Errorf("%q decoded without an error", bad)
		}
	}
	var s1, s2 any
	_ = json.Unmarshal([]byte("{\"a\":\"x\xffy\"}"), &s1)
	if err := UnmarshalJSON([]byte("{\"a\":\"x\xffy\"}"), &s2); err != nil || !reflect.DeepEqual(s1, s2) {
		t.Errorf("invalid UTF-8: encoding/json reads %q, the codec %q (%v)", s1, s2, err)
	}
}

// A binding kept encoded (SpecCache.DecodeBinding) is embedded byte for byte as it
// arrived, reads back with equal fields, and is encoded from its fields
// again once Reencode is called after a change.
func TestABindingKeptEncodedIsEmbeddedAsReceived(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	orig := Binding{Key: ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "web"}, APIVersion: "apps/v1", Generation: 2, Revision: 5,
		Template: json.RawMessage(`{"kind":"Deployment"}`), Replicas: 4,
		ReplicaRequirements: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")},
		Policy:              &PolicyRef{Kind: "PropagationPolicy", Namespace: "ns", Name: "p"}, RescheduleRequestedAt: &at}
	e, err := New(TypeBindingChanged, "/test", orig.Key.String(), orig)
	if err != nil {
		t.Fatal(err)
	}
	var cache SpecCache
	b, err := cache.DecodeBinding(e)
	if err != nil {
		t.Fatal(err)
	}
	p := PlacementDecision{Key: b.Key, BindingRevision: b.Revision, Binding: &b, DecidedAt: at}
	kept, err := MarshalJSON(p)
	if err != nil {
		t.Fatal(err)
	}
	fresh := b
	fresh.Reencode()
	p.Binding = &fresh
	plain, _ := json.Marshal(p)
	if string(kept) != string(plain) {
		t.Fatalf("kept encoding differs from the fields' encoding:\n%s\n%s", kept, plain)
	}
	var back PlacementDecision
	if err := UnmarshalJSON(kept, &back); err != nil {
		t.Fatal(err)
	}
	if back.Binding == nil || back.Binding.Revision != 5 || back.Binding.Replicas != 4 || string(back.Binding.Template) != `{"kind":"Deployment"}` ||
		back.Binding.ReplicaRequirements.Cpu().MilliValue() != 250 || !back.Binding.RescheduleRequestedAt.Equal(at) {
		t.Fatalf("read back: %+v", back.Binding)
	}
	changed := b
	changed.Replicas = 9
	changed.Reencode()
	out, _ := MarshalJSON(changed)
	var again Binding
	if err := UnmarshalJSON(out, &again); err != nil || again.Replicas != 9 {
		t.Fatalf("a re-encoded change must show: %s (%v)", out, err)
	}
	// A change made without Reencode shows too: the kept bytes are used
	// only while the binding holds what they were read from.
	for name, change := range map[string]func(*Binding){
		"replicas":   func(x *Binding) { x.Replicas = 7 },
		"revision":   func(x *Binding) { x.Revision++ },
		"template":   func(x *Binding) { x.Template = json.RawMessage(`{"kind":"Other"}`) },
		"spec":       func(x *Binding) { x.Spec = &policy.PropagationSpec{Preemption: "Always"} },
		"overrides":  func(x *Binding) { x.Overrides = append(x.Overrides, policy.OverridePolicy{}) },
		"reschedule": func(x *Binding) { x.RescheduleRequestedAt = nil },
		"warnings":   func(x *Binding) { x.Warnings = []string{"spec.x: deprecated"} },
		"acceptedAt": func(x *Binding) { x.AcceptedAt = x.AcceptedAt.Add(time.Second) },
		"components": func(x *Binding) { x.Components = []policy.Component{{Name: "head", Replicas: 1}} },
		"interpretation": func(x *Binding) {
			x.Interpretation = &policy.Interpretation{Names: []string{"r"}, ReplicaResource: "function GetReplicas(o) return 1 end"}
		},
		"interpreterError": func(x *Binding) { x.InterpreterError = "InterpretReplica: boom" },
	} {
		c := b
		change(&c)
		fresh := c
		fresh.Reencode()
		got, _ := MarshalJSON(c)
		want, _ := MarshalJSON(fresh)
		if string(got) != string(want) {
			t.Errorf("a binding whose %s changed must be encoded afresh:\n%s\n%s", name, got, want)
		}
	}
}

// SpecCache decodes a binding exactly as a plain Decode does, sharing the
// spec of bindings whose spec text equals the last one of their policy.
func TestASpecCacheDecodesAsDecodeBindingAndSharesEqualSpecs(t *testing.T) {
	ref := &PolicyRef{Kind: "PropagationPolicy", Namespace: "ns", Name: "p"}
	weight := int32(3)
	spec := func(prio int32) *policy.PropagationSpec {
		return &policy.PropagationSpec{Priority: &prio, Placement: policy.Placement{ClusterAffinity: &policy.ClusterAffinity{ClusterNames: []string{"a", "b"}}}}
	}
	mk := func(name string, p *PolicyRef, s *policy.PropagationSpec) Event {
		b := Binding{Key: ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: name}, APIVersion: "apps/v1", Revision: 1, Replicas: 2,
			Template: json.RawMessage(`{"kind":"Deployment","spec":{"replicas":2}}`), Policy: p, Spec: s,
			ReplicaRequirements: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		e, err := New(TypeBindingChanged, "/test", name, b)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	var c SpecCache
	check := func(e Event) Binding {
		t.Helper()
		got, err := c.DecodeBinding(e)
		if err != nil {
			t.Fatal(err)
		}
		var want Binding
		if err := Decode(e, &want); err != nil {
			t.Fatal(err)
		}
		got.Reencode()
		g, _ := MarshalJSON(got)
		w, _ := MarshalJSON(want)
		if string(g) != string(w) {
			t.Fatalf("decoded differently:\n%s\n%s", g, w)
		}
		return got
	}
	a := check(mk("a", ref, spec(weight)))
	b := check(mk("b", ref, spec(weight)))
	if a.Spec == nil || a.Spec != b.Spec {
		t.Fatal("equal specs of one policy must be shared")
	}
	c2 := check(mk("c", ref, spec(weight+1)))
	if c2.Spec == a.Spec || *c2.Spec.Priority != weight+1 || *a.Spec.Priority != weight {
		t.Fatal("a changed spec must be decoded afresh, the earlier one untouched")
	}
	if d := check(mk("d", ref, spec(weight+1))); d.Spec != c2.Spec {
		t.Fatal("the changed spec is the one shared from then on")
	}
	if n := check(mk("e", nil, spec(weight))); n.Spec == nil || n.Spec == a.Spec {
		t.Fatal("a binding without a policy gets its own spec")
	}
	if n := check(mk("f", ref, nil)); n.Spec != nil {
		t.Fatal("no spec must stay no spec")
	}
	// The kept encoding is the event's.
	e := mk("g", ref, spec(weight))
	g, _ := c.DecodeBinding(e)
	if out, _ := MarshalJSON(g); string(out) != string(e.Data()) {
		t.Fatalf("the binding must be embedded as received")
	}
	// A binding written with another key spelling is decoded the plain way.
	raw := mk("h", ref, nil)
	raw.DataEncoded = []byte(strings.Replace(string(raw.Data()), `"policy":`, `"Spec":{"preemption":"Always"},"policy":`, 1))
	if h, err := c.DecodeBinding(raw); err != nil || h.Spec == nil || h.Spec.Preemption != "Always" {
		t.Fatalf("a \"Spec\" key must be read as encoding/json reads it: %+v %v", h.Spec, err)
	}
}

// What sonic refuses goes to encoding/json: depth up to encoding/json's
// limit is accepted, and errors read as encoding/json's.
func TestTheCodecAcceptsAndRefusesWhatEncodingJSONDoes(t *testing.T) {
	deep := `{"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`
	var a, b map[string]any
	if err := UnmarshalJSON([]byte(deep), &a); err != nil {
		t.Fatalf("5,000 levels (encoding/json takes up to 10,000): %.120v", err)
	}
	_ = json.Unmarshal([]byte(deep), &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("a deep document decodes as encoding/json decodes it")
	}
	if out, err := MarshalJSON(a); err != nil || string(out) != deep {
		t.Fatalf("and encodes back: %v", err)
	}
	for _, bad := range []string{`{"a":`, `{"a":1,}`, `[1 2]`, `{"a":tru}`, `{"replicas":"x"}`} {
		var got, want struct {
			A        any   `json:"a"`
			Replicas int32 `json:"replicas"`
		}
		gerr, werr := UnmarshalJSON([]byte(bad), &got), json.Unmarshal([]byte(bad), &want)
		if gerr == nil || werr == nil || gerr.Error() != werr.Error() {
			t.Errorf("%s: codec error %v, encoding/json error %v", bad, gerr, werr)
		}
	}
	// A failed decode leaves nothing half-decoded behind.
	m := map[string]any{"kept": true}
	if err := UnmarshalJSON([]byte(`{"a":1,"b":`), &m); err == nil || len(m) != 1 {
		t.Fatalf("a failed decode must leave the target as it was: %v %v", m, err)
	}
	// Data given as JSON is validated and stored compact; nil is null.
	if _, err := NewWithID("id", TypeObjectApplied, "/t", "s", json.RawMessage(`{"a":`)); err == nil {
		t.Error("invalid JSON data must be refused")
	}
	if e, _ := NewWithID("id", TypeObjectApplied, "/t", "s", json.RawMessage(" {\"a\" : 1}")); string(e.Data()) != `{"a":1}` {
		t.Errorf("JSON data stored as %q", e.Data())
	}
	if e, _ := NewWithID("id", TypeObjectApplied, "/t", "s", json.RawMessage(nil)); string(e.Data()) != `null` {
		t.Errorf("nil JSON data stored as %q", e.Data())
	}
	// A Marshaler's output is HTML-escaped as encoding/json escapes it.
	v := map[string]any{"raw": json.RawMessage(`{"s":"<a>&\u2028"}`)}
	got, _ := MarshalJSON(v)
	want, _ := json.Marshal(v)
	if string(got) != string(want) {
		t.Errorf("escaping: %s vs %s", got, want)
	}
}

// A spec encoded once for all the bindings of a policy (KeepSpecEncoding)
// is written exactly where, and as, encoding the binding's fields writes
// it; a binding whose Spec no longer points at the kept spec is encoded
// from its fields.
func TestABindingWithItsSpecKeptEncodedWritesTheSameBytes(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	spec := &policy.PropagationSpec{Placement: policy.Placement{ClusterAffinity: &policy.ClusterAffinity{ClusterNames: []string{"a", "b"}}}}
	b := Binding{Key: ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "ns", Name: "web"}, APIVersion: "apps/v1", Generation: 1, Revision: 2,
		Template: json.RawMessage(`{"kind":"Deployment"}`), Replicas: 3, Policy: &PolicyRef{Kind: "PropagationPolicy", Namespace: "ns", Name: "p"},
		Overrides: []policy.OverridePolicy{{}}, Warnings: []string{"w"}, AcceptedAt: at, CreatedAt: at, InputSequence: 7, Spec: spec}
	want, err := json.Marshal(bindingFields(b))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := json.Marshal(spec)
	b.KeepSpecEncoding(text)
	got, err := json.Marshal(b)
	if err != nil || string(got) != string(want) {
		t.Errorf("kept spec:\nwant %s\n got %s (%v)", want, got, err)
	}
	b.KeepSpecEncoding([]byte(`{"stale":true}`))
	other := *spec
	b.Spec = &other
	if got, err := json.Marshal(b); err != nil || string(got) != string(want) {
		t.Errorf("a spec pointed at anew is encoded from its fields:\nwant %s\n got %s (%v)", want, got, err)
	}
}

// TestValidJSONAnswersAsEncodingJSON holds ValidJSON to json.Valid, and
// UnmarshalJSON's refusals to encoding/json's, on
// input either codec could judge differently: invalid UTF-8, nesting deeper
// than sonic goes, numbers, escapes, trailing data and truncation.
func TestValidJSONAnswersAsEncodingJSON(t *testing.T) {
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	inputs := []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1e400`, `01`, `1.`, `.5`, `true`, `nul`,
		`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":1}x`, `{"a":1} `, ` {"a":1}`, `{"a":"\u12"}`, `{"a":"\ud800"}`,
		"{\"a\":\"\xff\"}", "\"\xc3\x28\"", "\"tab\there\"", `"\/"`, `{"a":[1,2,{"b":null}]}`, `{"a":[1,2,}`,
		deep, deep[:len(deep)-1], ``, ` `,
	}
	for _, in := range inputs {
		if got, want := ValidJSON([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("ValidJSON(%.40q) = %t, json.Valid says %t", in, got, want)
		}
		var got, want any
		if gotErr, wantErr := UnmarshalJSON([]byte(in), &got), json.Unmarshal([]byte(in), &want); (gotErr == nil) != (wantErr == nil) {
			t.Errorf("UnmarshalJSON(%.40q): error %v, encoding/json's %v", in, gotErr, wantErr)
		}
	}
}
