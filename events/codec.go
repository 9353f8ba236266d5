package events

import (
	"github.com/bytedance/sonic"
)

// JSON is the codec of event data on the hot paths (every event built with
// New or NewWithID, every Decode, and the objects policyd and schedulerd
// re-encode per template). It is bytedance/sonic configured as
// encoding/json behaves: sorted map keys, HTML escaping, strings copied out
// of the input, invalid UTF-8 replaced, Marshaler/Unmarshaler honoured, so
// the bytes equal encoding/json's (TestCodecMatchesEncodingJSON) at 2-4
// times the speed and a fraction of the allocations (DESIGN.md decision
// 14). One difference, on purpose: what a json.Marshaler returns (a
// json.RawMessage such as a binding's template, a binding kept encoded) is
// validated but written as is, not re-compacted and HTML-escaped again:
// that pass was 5 % of the placement path, and every such value on the
// bus is already compact JSON written by this codec.
var JSON = sonic.Config{
	EscapeHTML:       true,
	SortMapKeys:      true,
	CompactMarshaler: false,
	CopyString:       true,
	ValidateString:   true,
}.Froze()

// MarshalJSON encodes v as encoding/json would.
func MarshalJSON(v any) ([]byte, error) { return JSON.Marshal(v) }

// UnmarshalJSON decodes data into v as encoding/json would.
func UnmarshalJSON(data []byte, v any) error { return JSON.Unmarshal(data, v) }
