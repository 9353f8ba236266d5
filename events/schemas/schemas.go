// Package schemas generates the JSON Schema of each event type's data from
// the Go types it decodes into (events.Payload), so that an outside
// publisher can validate an event before it publishes it. The schemas are
// kept in docs/schemas, one file per type named by the type's dataschema
// (events.DataSchema); a test regenerates them and fails on any difference.
package schemas

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/flotilla-io/flotilla/events"
)

// FileName is the file of t's schema in docs/schemas: the last path
// element of its dataschema.
func FileName(t events.Type) string { return path.Base(events.DataSchema(t)) }

// Generate returns the schema of every catalogued type's data, by file
// name, as indented JSON ending in a newline.
func Generate() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, e := range events.Catalogue {
		s := Reflect(e.Type)
		if s == nil {
			return nil, fmt.Errorf("%s: no payload type (events.Payload)", e.Type)
		}
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Type, err)
		}
		out[FileName(e.Type)] = append(b, '\n')
	}
	return out, nil
}

// Reflect is the schema of t's data (nil for a type the catalogue does
// not list).
func Reflect(t events.Type) *jsonschema.Schema {
	v := events.Payload(t)
	if v == nil {
		return nil
	}
	// Required only where a tag says so: the decoders take a missing field
	// as its zero value, and a publisher need not send one.
	r := jsonschema.Reflector{ExpandedStruct: true, Mapper: mapType, Namer: name, RequiredFromJSONSchemaTags: true}
	s := r.Reflect(v)
	nullable(s)
	for _, d := range s.Definitions {
		nullable(d)
	}
	s.ID = jsonschema.ID(events.DataSchema(t))
	s.Title = string(t)
	if e, ok := events.Lookup(t); ok {
		s.Description = e.Doc
	}
	return s
}

var (
	rawMessage = reflect.TypeOf(json.RawMessage{})
	quantity   = reflect.TypeOf(resource.Quantity{})
	metaTime   = reflect.TypeOf(metav1.Time{})
	intOrStr   = reflect.TypeOf(intstr.IntOrString{})
	scores     = reflect.TypeOf(events.ClusterScores{})
	object     = reflect.TypeOf(events.KubernetesObject{})
)

// mapType gives the types whose JSON is not their Go structure their
// schema: embedded JSON is any JSON, a quantity is a string or a number,
// a metav1.Time a date-time string, an IntOrString either, and a
// Kubernetes object any object with apiVersion, kind and metadata.name.
func mapType(t reflect.Type) *jsonschema.Schema {
	switch t {
	case rawMessage:
		return &jsonschema.Schema{Description: "any JSON value"}
	case quantity:
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "number"}}, Description: "a Kubernetes resource quantity"}
	case metaTime:
		return &jsonschema.Schema{Type: "string", Format: "date-time"}
	case scores:
		return &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "integer"}} // by cluster (docs/events.md)
	case intOrStr:
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "integer"}, {Type: "string"}}}
	case object:
		props := jsonschema.NewProperties()
		props.Set("apiVersion", &jsonschema.Schema{Type: "string", MinLength: ptr(uint64(1))})
		props.Set("kind", &jsonschema.Schema{Type: "string", MinLength: ptr(uint64(1))})
		md := jsonschema.NewProperties()
		md.Set("name", &jsonschema.Schema{Type: "string", MinLength: ptr(uint64(1))})
		md.Set("namespace", &jsonschema.Schema{Type: "string"})
		props.Set("metadata", &jsonschema.Schema{Type: "object", Properties: md, Required: []string{"name"}})
		return &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"apiVersion", "kind", "metadata"},
			Description: "a Kubernetes object"}
	}
	return nil
}

// nullable lets each property of s (and of the objects within it) that
// may encode as null be null: a nil slice, map or pointer is encoded so
// when its field has no omitempty.
func nullable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Properties != nil {
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			v := p.Value
			nullable(v)
			if v.Ref != "" || v.Type == "array" || (v.Type == "object" && v.Properties == nil) {
				p.Value = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{v, {Type: "null"}}}
			}
		}
	}
	nullable(s.Items)
	nullable(s.AdditionalProperties)
}

func ptr[T any](v T) *T { return &v }

// name qualifies the types of other packages by their last two path
// elements (core.v1.Toleration, meta.v1.Condition, events.policy.Placement)
// so that two types of one name never share a definition.
func name(t reflect.Type) string {
	if t.PkgPath() == "github.com/flotilla-io/flotilla/events" || t.PkgPath() == "" {
		return t.Name()
	}
	parts := strings.Split(t.PkgPath(), "/")
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, ".") + "." + t.Name()
}
