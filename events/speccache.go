package events

import (
	"encoding/json"
	"fmt"

	"github.com/flotilla-io/flotilla/events/policy"
)

// SpecCache decodes bindings so that those carrying the same policy spec
// share one decoded spec: every template a policy claims carries the
// policy's spec, and decoding it again per binding (then keeping 10,000
// copies) was a fifth of schedulerd's work and half its heap. It compares
// the spec's JSON text (read as text, not decoded) with the text it
// decoded last for the same policy. Shared specs are read-only, as every
// binding's spec already is. It keeps one spec per policy it has seen. Not
// safe for concurrent use.
type SpecCache struct {
	byPolicy map[PolicyRef]cachedSpec
}

type cachedSpec struct {
	text string
	spec *policy.PropagationSpec
}

// bindingWithRawSpec reads a binding with its spec left as JSON text: the
// outer Spec takes the "spec" key (matched as encoding/json matches keys)
// from the embedded Binding's.
type bindingWithRawSpec struct {
	Binding
	Spec json.RawMessage `json:"spec,omitempty"`
}

// DecodeBinding reads a binding event's data, keeping its encoding (so
// that embedding the binding again costs a copy instead of an encode) and
// sharing the spec when its text equals the one last decoded for its
// policy.
func (c *SpecCache) DecodeBinding(e Event) (Binding, error) {
	var r bindingWithRawSpec
	if err := Decode(e, &r); err != nil {
		return Binding{}, err
	}
	b := r.Binding
	if len(r.Spec) > 0 && string(r.Spec) != "null" {
		held, ok := c.byPolicy[policyOf(b)]
		if !ok || b.Policy == nil || held.text != string(r.Spec) {
			var spec policy.PropagationSpec
			if err := UnmarshalJSON(r.Spec, &spec); err != nil {
				return Binding{}, Permanent(fmt.Errorf("decode %s data: spec: %w", e.Type(), err))
			}
			held = cachedSpec{text: string(r.Spec), spec: &spec}
			if b.Policy != nil {
				if c.byPolicy == nil {
					c.byPolicy = map[PolicyRef]cachedSpec{}
				}
				c.byPolicy[*b.Policy] = held
			}
		}
		b.Spec = held.spec
	}
	b.encoded = keep(e.Data(), &b)
	return b, nil
}

func policyOf(b Binding) PolicyRef {
	if b.Policy == nil {
		return PolicyRef{}
	}
	return *b.Policy
}

// keptSpec is the JSON of the spec a binding pointed to.
type keptSpec struct {
	spec *policy.PropagationSpec
	text json.RawMessage
}

// bindingWithSpecText is a binding's encoding with its spec already
// encoded (the shallower spec field wins over bindingFields' own).
type bindingWithSpecText struct {
	bindingFields
	Spec json.RawMessage `json:"spec,omitempty"`
}

// KeepSpecEncoding records text as the JSON of the spec b points to: while
// b.Spec still points there, MarshalJSON writes text instead of encoding
// the spec again. Whoever calls it must not change that spec afterwards.
func (b *Binding) KeepSpecEncoding(text []byte) {
	b.specText = &keptSpec{spec: b.Spec, text: text}
}
