package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unsafe"

	"github.com/bytedance/sonic/ast"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events/policy"
)

// SpecCache decodes bindings so that those carrying the same policy spec
// share one decoded spec: every template a policy claims carries the
// policy's spec, and decoding it again per binding (then keeping 10,000
// copies) was a fifth of schedulerd's work and half its heap. It compares
// the spec's JSON text, found without decoding, with the text it decoded
// last for the same policy (the exact key "spec", as policyd writes it; a
// binding without one is decoded the plain way; should the key come twice,
// the first is taken where encoding/json takes the last). Shared specs are
// read-only, as every binding's spec already is. It keeps one spec per
// policy it has seen. Not safe for concurrent use.
type SpecCache struct {
	byPolicy map[PolicyRef]cachedSpec
}

type cachedSpec struct {
	text string
	spec *policy.PropagationSpec
}

// bindingNoSpec is Binding read without its spec (the pointer conversion
// in DecodeBinding fails to compile if the two types drift apart).
type bindingNoSpec struct {
	Key                   ObjectKey               `json:"key"`
	APIVersion            string                  `json:"apiVersion"`
	UID                   string                  `json:"uid,omitempty"`
	Generation            int64                   `json:"generation"`
	Revision              int64                   `json:"revision"`
	Template              json.RawMessage         `json:"template,omitempty"`
	Replicas              int32                   `json:"replicas"`
	ReplicaRequirements   corev1.ResourceList     `json:"replicaRequirements,omitempty"`
	Policy                *PolicyRef              `json:"policy,omitempty"`
	Spec                  *policy.PropagationSpec `json:"-"`
	Overrides             []policy.OverridePolicy `json:"overrides,omitempty"`
	Dependencies          []Dependency            `json:"dependencies,omitempty"`
	RescheduleRequestedAt *time.Time              `json:"rescheduleRequestedAt,omitempty"`
	encoded               *keptEncoding
}

// DecodeBinding is events.DecodeBinding (the encoding is kept) with the
// spec shared when its text equals the one last decoded for its policy.
func (c *SpecCache) DecodeBinding(e Event) (Binding, error) {
	var b Binding
	if err := Decode(e, (*bindingNoSpec)(&b)); err != nil {
		return Binding{}, err
	}
	data := e.Data()
	text, err := ast.NewSearcher(unsafe.String(unsafe.SliceData(data), len(data))).GetByPath("spec")
	if errors.Is(err, ast.ErrNotExist) {
		// No "spec" key as policyd writes it: decode as encoding/json
		// would (which also matches "Spec" and takes a duplicate's last).
		return DecodeBinding(e)
	}
	if err != nil {
		return Binding{}, Permanent(fmt.Errorf("decode %s data: spec: %w", e.Type(), err))
	}
	raw, err := text.Raw()
	if err != nil {
		return Binding{}, Permanent(fmt.Errorf("decode %s data: spec: %w", e.Type(), err))
	}
	if b.Policy != nil {
		if held, ok := c.byPolicy[*b.Policy]; ok && held.text == raw {
			b.Spec = held.spec
			b.encoded = keep(data, &b)
			return b, nil
		}
	}
	var spec *policy.PropagationSpec
	if err := JSON.UnmarshalFromString(raw, &spec); err != nil {
		return Binding{}, Permanent(fmt.Errorf("decode %s data: spec: %w", e.Type(), err))
	}
	b.Spec = spec
	b.encoded = keep(data, &b)
	if b.Policy != nil && spec != nil {
		if c.byPolicy == nil {
			c.byPolicy = map[PolicyRef]cachedSpec{}
		}
		c.byPolicy[*b.Policy] = cachedSpec{text: strings.Clone(raw), spec: spec}
	}
	return b, nil
}
