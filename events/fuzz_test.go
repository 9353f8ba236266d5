package events

import (
	"encoding/json"
	"testing"
)

// FuzzFromHeaders feeds arbitrary headers and data to the envelope
// decoder, as a NATS message carries them: it never panics, and an event
// it accepts travels through WriteHeaders and back unchanged.
func FuzzFromHeaders(f *testing.F) {
	f.Add("1.0", "id-1", "/ci", string(TypeObjectApplied), "default/Deployment.apps/my-app", "2026-11-30T04:41:41.303248352Z", "", "correlationid", "a b%", []byte(`{"kind":"Deployment"}`))
	f.Add("1.0", "", "", "", "", "", "", "", "", []byte(nil))
	f.Add("0.3", "x", "y", "z", "", "yesterday", "application/xml", "ce-", "%zz", []byte("<a/>"))
	f.Add("1.0", "x", "%2F", "t", "%", "2026-01-01T00:00:00+14:00", "text/plain", "Dataschema", "::", []byte{0xff, 0})
	f.Fuzz(func(t *testing.T, specversion, id, source, typ, subject, tm, contentType, ext, extValue string, data []byte) {
		h := map[string]string{"ce-specversion": specversion, "ce-id": id, "ce-source": source, "ce-type": typ,
			"ce-subject": subject, "ce-time": tm, HeaderContentType: contentType, "ce-" + ext: extValue}
		keys := make([]string, 0, len(h))
		for k := range h {
			keys = append(keys, k)
		}
		e, err := FromHeaders(func(k string) string { return h[k] }, keys, data)
		if err != nil {
			if !IsPermanent(err) {
				t.Fatalf("a malformed envelope must be a permanent error: %v", err)
			}
			return
		}
		h2 := map[string]string{}
		body, err := WriteHeaders(e, func(k, v string) { h2[k] = v })
		if err != nil {
			t.Fatalf("accepted %+v, but it does not encode: %v", e, err)
		}
		keys2 := make([]string, 0, len(h2))
		for k := range h2 {
			keys2 = append(keys2, k)
		}
		again, err := FromHeaders(func(k string) string { return h2[k] }, keys2, body)
		if err != nil {
			t.Fatalf("%+v encodes to headers it refuses: %v", h2, err)
		}
		if again.ID() != e.ID() || again.Type() != e.Type() || again.Source() != e.Source() || again.Subject() != e.Subject() ||
			!again.Time().Equal(e.Time()) || string(again.Data()) != string(e.Data()) || again.DataSchema() != e.DataSchema() {
			t.Fatalf("round trip changed the event:\n%+v\n%+v", e, again)
		}
	})
}

// FuzzDecodePayload decodes arbitrary data as each catalogued type's
// payload, as the daemons decode what they read from the bus: it never
// panics, and what it accepts encodes and decodes again.
func FuzzDecodePayload(f *testing.F) {
	for i, d := range []string{
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"b"}}`,
		`{"namespace":"karmada-system","name":"c1-kubeconfig","keyID":"k","data":{"kubeconfig":"AAAA"}}`,
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}`,
		`{"key":{"kind":"Deployment","name":"a"},"generation":1,"object":{"kind":"Deployment"},"updatedAt":"2026-01-01T00:00:00Z"}`,
		`{"key":{"kind":"Deployment","name":"a"}}`,
		`{"key":{"kind":"Deployment","name":"a"},"problems":[{"field":"spec","reason":"bad"}]}`,
		`{"key":{"kind":"Deployment","name":"a"},"template":{"kind":"Deployment"},"replicas":3,"replicaRequirements":{"cpu":"100m"},"spec":{"placement":{}}}`,
		`{"key":{"kind":"Deployment","name":"a"},"generation":2}`,
		`{"name":"cluster1","labels":{"a":"b"},"spec":{"apiEndpoint":"https://x"}}`,
		`{"name":"cluster1","generation":3}`,
		`{"id":"k","public":"AAAA"}`,
		`{"cluster":"c1","state":"Ready","conditions":[{"type":"Ready","status":"True"}]}`,
		`{"cluster":"c1","allocatable":{"cpu":"4","memory":"8Gi"},"nodes":3}`,
		`{"clusters":[{"cluster":"c1","state":"Ready"}]}`,
		`{"key":{"kind":"Deployment","name":"a"},"scheduled":true,"clusters":[{"name":"c1","replicas":2}]}`,
		`{"key":{"kind":"Deployment","name":"a"}}`,
		`{"key":{"kind":"Deployment","name":"a"},"from":"c1"}`,
		`{"key":{"kind":"Deployment","name":"a"},"cluster":"c1"}`,
		`{"key":{"kind":"Deployment","name":"a"},"cluster":"c1","phase":"Applied","replicas":1}`,
		`{"key":{"kind":"Deployment","name":"a"},"cluster":"c1","phase":"Deleted"}`,
		`{"consumer":"policyd-input","reason":"bad"}`,
	} {
		f.Add(uint8(i), []byte(d))
	}
	f.Add(uint8(7), []byte(`{"replicaRequirements":{"cpu":"1e400"},"acceptedAt":"2026-02-30T25:00:00Z"}`))
	f.Add(uint8(15), []byte(`{"clusters":null,"decidedAt":"0001-01-01T00:00:00Z","key":{"kind":"\u0000"}}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		typ := Catalogue[int(which)%len(Catalogue)].Type
		v := Payload(typ)
		if err := UnmarshalJSON(data, v); err != nil {
			return
		}
		out, err := MarshalJSON(v)
		if err != nil {
			t.Fatalf("%s: %s decodes but does not encode: %v", typ, data, err)
		}
		if err := UnmarshalJSON(out, Payload(typ)); err != nil {
			t.Fatalf("%s: %s encodes to %s, which does not decode: %v", typ, data, out, err)
		}
		if typ == TypeBindingChanged || typ == TypeBindingRemoved {
			// schedulerd and executord read bindings through a SpecCache.
			e, err := NewWithID("id", typ, "/fuzz", "s", json.RawMessage(data))
			if err != nil {
				return
			}
			var c SpecCache
			b, err := c.DecodeBinding(e)
			if err != nil {
				t.Fatalf("DecodeBinding refuses %s, which decodes as a Binding: %v", data, err)
			}
			if _, err := MarshalJSON(b); err != nil {
				t.Fatalf("a binding DecodeBinding read does not encode: %v", err)
			}
		}
	})
}
