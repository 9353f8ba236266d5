package main

import (
	"encoding/json"
	"fmt"
	"mime"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

// decodeEvent decodes one element of publish's input, a structured
// CloudEvent, refusing what the CloudEvents SDK would read but Flotilla
// never handles: a specversion other than 1.0, data that is not JSON. The
// problems name the field; an SDK error is cut to its reason.
func decodeEvent(raw json.RawMessage) (events.Event, []string) {
	var e events.Event
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return e, []string{"not a CloudEvent in structured JSON: not a JSON object"}
	}
	var version, contentType string
	if json.Unmarshal(fields["specversion"], &version) != nil || version == "" {
		return e, []string{"specversion: required: must be \"1.0\""}
	}
	if version != "1.0" {
		return e, []string{fmt.Sprintf("specversion: unsupported value %q: must be \"1.0\" (Flotilla's events are CloudEvents 1.0)", version)}
	}
	if ct, ok := fields["datacontenttype"]; ok && (json.Unmarshal(ct, &contentType) != nil || !jsonMediaType(contentType)) {
		return e, []string{fmt.Sprintf("datacontenttype: unsupported value %s: Flotilla's events carry JSON data (application/json)", ct)}
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, []string{"not a CloudEvent in structured JSON: " + sdkReason(err)}
	}
	if err := e.Validate(); err != nil {
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
			out = append(out, strings.TrimSpace(line))
		}
		return e, out
	}
	return e, nil
}

// jsonMediaType reports whether a datacontenttype says the data is JSON.
func jsonMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// sdkReason is an error of the CloudEvents SDK without the decoder's
// position report (json-iterator's ", error found in #N byte of ...").
func sdkReason(err error) string {
	msg, _, _ := strings.Cut(strings.TrimSpace(err.Error()), ", error found in #")
	return msg
}

// inputChecks are the problems policyd is certain to dead-letter e for,
// on NATS subject subject: an event type the catalogue does not have, or
// one that is not an input on an input subject, and data policyd cannot
// take (policyd/handler.go): an applied object its validator refuses
// (validation.ValidateObject, as apply runs it), a deletion or reschedule
// that names no object. Refusals that depend on policyd's configuration
// (its replica limit) or state are left to policyd.
func inputChecks(e events.Event, subject string) []string {
	typ := events.Type(e.Type())
	if _, ok := events.Lookup(typ); !ok {
		return []string{fmt.Sprintf("type: unknown event type %q: not in Flotilla's event catalogue (inputs: %s)", typ, strings.Join(inputTypes(), ", "))}
	}
	if !strings.HasPrefix(subject, "flotilla.input.") {
		return nil // sent elsewhere with --subject: its consumer decides
	}
	input := false
	for _, t := range inputTypes() {
		input = input || t == string(typ)
	}
	if !input {
		return []string{fmt.Sprintf("type: %s is not an input: policyd takes only %s on flotilla.input.> (--subject sends it elsewhere)", typ, strings.Join(inputTypes(), ", "))}
	}
	switch typ {
	case events.TypeObjectApplied:
		if len(e.Data()) == 0 {
			return []string{"data: required: the Kubernetes object applied"}
		}
		var obj any
		if err := events.UnmarshalJSON(e.Data(), &obj); err != nil {
			return []string{"data: not JSON: " + err.Error()}
		}
		m, ok := obj.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("data: must be a Kubernetes object (a JSON object), got %s", jsonKind(obj))}
		}
		_, errs, _ := validation.ValidateObject(m)
		var out []string
		for _, p := range errs {
			field := "data"
			if p.Field != "" {
				field += "." + p.Field
			}
			out = append(out, validation.Format(events.FieldError{Field: field, Reason: p.Reason}))
		}
		return out
	case events.TypeObjectDeleted, events.TypeRescheduleRequested:
		var id readmodel.ObjectIdentity
		if events.UnmarshalJSON(e.Data(), &id) != nil || id.Kind == "" || id.Metadata.Name == "" {
			return []string{"data: must name the object: apiVersion, kind and metadata.name"}
		}
	}
	return nil
}

// inputTypes are the event types of the input stream, from the catalogue.
func inputTypes() []string {
	var out []string
	for _, c := range events.Catalogue {
		if c.Stream == events.StreamInput {
			out = append(out, string(c.Type))
		}
	}
	return out
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case []any:
		return "an array"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	}
	return "a number"
}
