package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/uuid"
)

// Event is a CloudEvents 1.0 event (cloudevents/sdk-go/v2).
type Event = cloudevents.Event

// Correlation extensions (lower-case alphanumerics, as the spec demands).
const (
	ExtCorrelationID = "correlationid" // the id of the event that started the chain (e.g. the apply)
	ExtCausationID   = "causationid"   // the id of the event that directly caused this one
)

// New builds an event of type t about subject, with a fresh UUIDv7 id, the
// current time, the dataschema of t's data (DataSchema; none for a type
// the catalogue does not list) and data encoded as JSON.
func New(t Type, source, subject string, data any) (Event, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return Event{}, err
	}
	return NewWithID(id.String(), t, source, subject, data)
}

// NewWithID is New with a caller-chosen id. Use DeterministicID for events a
// restarted daemon may publish again: JetStream drops the duplicate by id.
func NewWithID(id string, t Type, source, subject string, data any) (Event, error) {
	e := cloudevents.New(cloudevents.CloudEventsVersionV1)
	e.SetID(id)
	e.SetType(string(t))
	e.SetSource(source)
	e.SetSubject(subject)
	e.SetTime(time.Now().UTC())
	if Payload(t) != nil {
		e.SetDataSchema(DataSchema(t))
	}
	switch d := data.(type) {
	case nil, []byte:
		// As the SDK does it (nil: no data; []byte: opaque bytes).
		if err := e.SetData("application/json", data); err != nil {
			return Event{}, fmt.Errorf("encode %s data: %w", t, err)
		}
	default:
		body, err := MarshalJSON(d)
		if err != nil {
			return Event{}, fmt.Errorf("encode %s data: %w", t, err)
		}
		if _, raw := d.(json.RawMessage); raw {
			// Data given as JSON is stored compact, as encoding/json would.
			var buf bytes.Buffer
			if err := json.Compact(&buf, body); err != nil {
				return Event{}, fmt.Errorf("encode %s data: %w", t, err)
			}
			body = buf.Bytes()
		}
		// What SetData does with a value it encodes itself, with our codec.
		e.SetDataContentType("application/json")
		e.DataEncoded, e.DataBase64 = body, false
	}
	return e, nil
}

// DeterministicID derives a stable UUID (v5-style, SHA-256 based) from parts.
func DeterministicID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	u, _ := uuid.FromBytes(sum[:16])
	u[6] = (u[6] & 0x0f) | 0x50 // version 5 layout
	u[8] = (u[8] & 0x3f) | 0x80 // RFC 4122 variant
	return u.String()
}

// CausedBy stamps e as caused by cause: causationid = cause.id and
// correlationid = cause's correlationid (or cause.id when it starts a chain).
func CausedBy(e *Event, cause Event) {
	e.SetExtension(ExtCausationID, cause.ID())
	corr := CorrelationID(cause)
	if corr == "" {
		corr = cause.ID()
	}
	e.SetExtension(ExtCorrelationID, corr)
}

// CorrelationID returns e's correlationid extension, or "".
func CorrelationID(e Event) string { return stringExt(e, ExtCorrelationID) }

// CausationID returns e's causationid extension, or "".
func CausationID(e Event) string { return stringExt(e, ExtCausationID) }

func stringExt(e Event, name string) string {
	v, ok := e.Extensions()[name]
	if !ok {
		return ""
	}
	s, _ := v.(string)
	return s
}

// Decode unmarshals e's JSON data into out; a failure is Permanent.
func Decode(e Event, out any) error {
	if err := UnmarshalJSON(e.Data(), out); err != nil {
		return Permanent(fmt.Errorf("decode %s data: %w", e.Type(), err))
	}
	return nil
}

// Header names of the CloudEvents NATS binding, binary content mode.
const (
	headerPrefix      = "ce-"
	HeaderContentType = "content-type"
	// HeaderMsgID is JetStream's de-duplication header; it carries the event id.
	HeaderMsgID = "Nats-Msg-Id"
)

// WriteHeaders renders e in binary content mode: every attribute as a
// "ce-" header (values percent-encoded where the binding says so), each
// handed to set, so that a transport writes its own header type directly;
// it returns the data, the body.
func WriteHeaders(e Event, set func(k, v string)) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, Permanent(fmt.Errorf("invalid event: %w", err))
	}
	set(headerPrefix+"specversion", e.SpecVersion())
	set(headerPrefix+"id", e.ID())
	set(headerPrefix+"source", e.Source())
	set(headerPrefix+"type", e.Type())
	set(HeaderMsgID, e.ID())
	if s := e.Subject(); s != "" {
		set(headerPrefix+"subject", pct(s))
	}
	if !e.Time().IsZero() {
		set(headerPrefix+"time", e.Time().UTC().Format(time.RFC3339Nano))
	}
	if ct := e.DataContentType(); ct != "" {
		set(HeaderContentType, ct)
	}
	if ds := e.DataSchema(); ds != "" {
		set(headerPrefix+"dataschema", ds)
	}
	ext := e.Extensions() // a copy the SDK makes; its own map when it is V1
	if v1, ok := e.Context.(*cloudevents.EventContextV1); ok {
		ext = v1.Extensions
	}
	for k, v := range ext {
		sv, ok := v.(string)
		if !ok {
			sv = fmt.Sprint(v)
		}
		set(headerPrefix+k, pct(sv))
	}
	return e.Data(), nil
}

// FromHeaders reads a binary-mode message back into an event and validates
// it. Any failure is Permanent: redelivery cannot repair a malformed event.
func FromHeaders(get func(string) string, keys []string, data []byte) (Event, error) {
	e := cloudevents.New()
	if v := get(headerPrefix + "specversion"); v != cloudevents.CloudEventsVersionV1 {
		return Event{}, Permanent(fmt.Errorf("not a CloudEvent 1.0: ce-specversion is %q", v))
	}
	e.SetID(get(headerPrefix + "id"))
	e.SetSource(get(headerPrefix + "source"))
	e.SetType(get(headerPrefix + "type"))
	if v := get(headerPrefix + "subject"); v != "" {
		e.SetSubject(unpct(v))
	}
	if v := get(headerPrefix + "time"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return Event{}, Permanent(fmt.Errorf("ce-time %q: %w", v, err))
		}
		e.SetTime(t)
	}
	if v := get(headerPrefix + "dataschema"); v != "" {
		e.SetDataSchema(v)
	}
	for _, k := range keys {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, headerPrefix) {
			continue
		}
		name := strings.TrimPrefix(lk, headerPrefix)
		switch name {
		case "specversion", "id", "source", "type", "subject", "time", "dataschema", "datacontenttype":
			continue
		}
		e.SetExtension(name, unpct(get(k)))
	}
	ct := get(HeaderContentType)
	if ct == "" {
		ct = get(headerPrefix + "datacontenttype")
	}
	if len(data) > 0 {
		if ct == "" {
			ct = "application/json"
		}
		if err := e.SetData(ct, data); err != nil {
			return Event{}, Permanent(err)
		}
	}
	if err := e.Validate(); err != nil {
		return Event{}, Permanent(fmt.Errorf("invalid CloudEvent: %w", err))
	}
	return e, nil
}

// pct percent-encodes what the CloudEvents HTTP/NATS header rules ask for:
// space, double quote, percent, and anything outside printable ASCII.
func pct(s string) string {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		r := s[i]
		plain = !(r <= 0x20 || r >= 0x7f || r == '"' || r == '%')
	}
	if plain {
		return s
	}
	var b strings.Builder
	for _, r := range []byte(s) {
		if r <= 0x20 || r >= 0x7f || r == '"' || r == '%' {
			fmt.Fprintf(&b, "%%%02X", r)
			continue
		}
		b.WriteByte(r)
	}
	return b.String()
}

func unpct(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}
