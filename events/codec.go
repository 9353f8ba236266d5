package events

import (
	"encoding/json"
	"reflect"

	"github.com/bytedance/sonic"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/flotilla-io/flotilla/events/policy"
)

// JSON is the codec of event data on the hot paths (every event built with
// New or NewWithID, every Decode, and the objects policyd and schedulerd
// re-encode per template). It is bytedance/sonic configured as
// encoding/json behaves: sorted map keys, HTML escaping, strings copied out
// of the input, invalid UTF-8 replaced, Marshaler/Unmarshaler honoured, so
// the bytes equal encoding/json's (TestCodecMatchesEncodingJSON) at 2-4
// times the speed and a fraction of the allocations (DESIGN.md decision
// 14). Differences, on purpose or accepted:
//   - what a json.Marshaler returns (a json.RawMessage such as a binding's
//     template, a binding kept encoded) is validated and HTML-escaped but
//     not re-compacted (its whitespace stays): that pass was 5 % of the
//     placement path, and every such value on the bus is already compact;
//   - a -0 read into an interface{} becomes 0 (harmless for Kubernetes).
//
// Use it through MarshalJSON and UnmarshalJSON, which hand anything sonic
// refuses (nesting deeper than its 4,096 levels, invalid input) to
// encoding/json, so that what is accepted and the wording of errors stay
// encoding/json's.
var JSON = sonic.Config{
	EscapeHTML:       true,
	SortMapKeys:      true,
	CompactMarshaler: false,
	CopyString:       true,
	ValidateString:   true,
}.Froze()

// MarshalJSON encodes v as encoding/json would.
func MarshalJSON(v any) ([]byte, error) {
	b, err := JSON.Marshal(v)
	if err != nil {
		return json.Marshal(v)
	}
	return b, nil
}

// ValidJSON reports whether data is valid JSON, exactly as json.Valid does
// (invalid UTF-8 and duplicate names allowed) at three times its speed: the
// go-json-experiment (encoding/json/v2) scanner. sonic's own Valid is faster
// still but lax: it accepts a raw control character in a string and a
// short \u escape (TestValidJSONAnswersAsEncodingJSON).
func ValidJSON(data []byte) bool {
	return jsontext.Value(data).IsValid(v1Validity...)
}

// v1Validity is what encoding/json's Valid allows beyond RFC 8259's strict
// reading, which jsontext would otherwise refuse.
var v1Validity = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// UnmarshalJSON decodes data into v as encoding/json would. Input that is
// not valid JSON (ValidJSON, which answers as json.Valid) goes to
// encoding/json untouched, which refuses it before changing v; when sonic
// refuses valid input (nesting deeper than it goes, a value of the wrong
// type), encoding/json decodes it afresh into a zero value and its answer,
// value or error, is the result.
func UnmarshalJSON(data []byte, v any) error {
	if !ValidJSON(data) {
		return json.Unmarshal(data, v)
	}
	err := JSON.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return json.Unmarshal(data, v) // encoding/json's own InvalidUnmarshalError
	}
	fresh := reflect.New(rv.Elem().Type())
	if err := json.Unmarshal(data, fresh.Interface()); err != nil {
		return err
	}
	rv.Elem().Set(fresh.Elem())
	return nil
}

// Warm compiles the codec for every event payload type now, instead of on
// the first event of each type (sonic compiles per type, ~20-60 ms each on
// this machine, more under load): a daemon calls it before it reports
// ready, so that its first decisions are as fast as the rest.
func Warm() {
	for _, v := range []any{
		Binding{}, bindingWithRawSpec{}, PlacementDecision{}, ObjectRecord{}, Rejection{}, FailoverRecord{},
		WorkStatus{}, ClusterRegistration{}, ClusterHealth{}, HealthSnapshot{}, ClusterCapacity{},
		policy.PropagationSpec{}, map[string]any{},
	} {
		_ = sonic.Pretouch(reflect.TypeOf(v))
	}
}
