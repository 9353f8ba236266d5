package strictyaml

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
)

// Decode checks root against the type into points to (see Checker) and
// decodes what fits into it. It returns the line of every field it read,
// for the caller to place problems of its own, and every problem found,
// each naming file, document, line and field path. into must be a non-nil
// pointer.
func Decode(file string, document int, root *Node, into any) (*Lines, []events.FieldError) {
	c := Checker{Lines: NewLines(root.Line())}
	x := c.Check(root, reflect.TypeOf(into).Elem(), "", root.Line())
	if x != nil {
		data, err := json.Marshal(x)
		if err == nil {
			err = json.Unmarshal(data, into)
		}
		if err != nil {
			// Check removed everything that does not fit: unexpected.
			c.errorAt("", root.Line(), "cannot decode: "+strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	for i := range c.Problems {
		c.Problems[i].File, c.Problems[i].Document = file, document
	}
	return c.Lines, c.Problems
}

// Lines knows the line each field path of one document was read from.
type Lines struct {
	lines   map[string]int
	docLine int
}

// NewLines is an empty index for a document that starts on docLine (0:
// not from a file).
func NewLines(docLine int) *Lines {
	return &Lines{lines: map[string]int{}, docLine: docLine}
}

// Record notes that path was read on line; the first record of a path
// stands, and a line of 0 (unknown) is not recorded.
func (l *Lines) Record(path string, line int) {
	if line <= 0 {
		return
	}
	if _, ok := l.lines[path]; !ok {
		l.lines[path] = line
	}
}

// Line returns the line of path, or of its nearest recorded ancestor, or
// the document's line.
func (l *Lines) Line(path string) int {
	for path != "" {
		if n, ok := l.lines[path]; ok {
			return n
		}
		path = parent(path)
	}
	return l.docLine
}

// parent strips the last segment of a field path: a.b -> a, a[0] -> a,
// a[k.x] -> a.
func parent(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	// selfDecoding caches, per type, whether *T implements json.Unmarshaler
	// (asked for every node of every document).
	selfDecoding sync.Map
)

func decodesItself(t reflect.Type) bool {
	if v, ok := selfDecoding.Load(t); ok {
		return v.(bool)
	}
	yes := reflect.PointerTo(t).Implements(jsonUnmarshaler)
	selfDecoding.Store(t, yes)
	return yes
}

// plainJSONString: s written as a JSON string is s between quotes (no
// escapes), so a type's UnmarshalJSON would see exactly s.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// Checker checks trees against Go types the way a strict JSON decoder
// would (see the package doc), for one document: the lines of the fields
// it visits go into Lines, the problems it finds into Problems. A Checker
// is used by one goroutine at a time.
type Checker struct {
	// Lines receives the line of every field path Check visits; it must
	// not be nil.
	Lines *Lines
	// Skip holds paths whose values are copied without being checked
	// (the status of a built-in kind, say).
	Skip map[string]bool
	// Open holds struct types whose unknown fields are accepted and copied
	// as they are.
	Open map[reflect.Type]bool
	// Problems are every problem Check found, in the order found.
	Problems []events.FieldError
}

// Check checks v, found at path (a field path, "" for the document) on
// line, against t. It returns v as plain JSON values (see Node.Any) with
// every unknown or ill-typed field left out, so a typed decode of the
// result never meets them again; nil for null and for a v that does not
// fit t at all.
func (w *Checker) Check(v *Node, t reflect.Type, path string, line int) any {
	return w.walk(v, t, path, line)
}

func (w *Checker) walk(v *Node, t reflect.Type, path string, line int) any {
	if line > 0 {
		w.Lines.Record(path, line)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v.kind == Null {
		return nil // null is the zero value of any field, as in JSON
	}
	if decodesItself(t) {
		// Quantity, IntOrString, Time, RawMessage, RawExtension...: let the
		// type judge its own JSON.
		raw := v.Any()
		if t == quantityType && v.kind == String && plainJSONString(v.str) {
			// What Quantity.UnmarshalJSON does with "<s>", without the round trip.
			if _, err := resource.ParseQuantity(strings.TrimSpace(v.str)); err != nil {
				w.errorAt(path, line, "invalid value: "+strings.TrimPrefix(err.Error(), "json: "))
				return nil
			}
			return raw
		}
		data, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(data, reflect.New(t).Interface())
		}
		var timeErr *time.ParseError
		switch {
		case errors.As(err, &timeErr):
			// Go's own wording names its reference layout, not the format.
			w.errorAt(path, line, fmt.Sprintf("invalid value %q: must be an RFC 3339 time such as 2026-01-02T15:04:05Z", timeErr.Value))
			return nil
		case err != nil:
			w.errorAt(path, line, "invalid value: "+strings.TrimPrefix(err.Error(), "json: "))
			return nil
		}
		return raw
	}
	switch t.Kind() {
	case reflect.Interface:
		return v.Any()
	case reflect.Struct:
		if v.kind != Map {
			return w.typeError(v, "object", path, line)
		}
		info := fieldsOf(t)
		out := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			cp, kl := joinField(path, k), v.keyLines[i]
			if w.Skip[cp] {
				w.Lines.Record(cp, kl)
				out[k] = v.vals[i].Any()
				continue
			}
			ft, ok := info.fields[k]
			if !ok {
				if w.Open[t] {
					w.Lines.Record(cp, kl)
					out[k] = v.vals[i].Any()
					continue
				}
				w.errorAt(cp, kl, unknownField(k, info.names))
				continue
			}
			if x := w.walk(v.vals[i], ft, cp, kl); x != nil {
				out[k] = x
			}
		}
		return out
	case reflect.Map:
		if v.kind != Map {
			return w.typeError(v, "object", path, line)
		}
		out := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			cp, kl := path+"["+k+"]", v.keyLines[i]
			if x := w.walk(v.vals[i], t.Elem(), cp, kl); x != nil {
				out[k] = x
			}
		}
		return out
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			// []byte is base64 in JSON (Secret.data).
			if v.kind != String {
				return w.typeError(v, "base64 string", path, line)
			}
			if _, err := base64.StdEncoding.DecodeString(v.str); err != nil {
				w.errorAt(path, line, "invalid value: not valid base64: "+err.Error())
				return nil
			}
			return v.str
		}
		if v.kind != Seq {
			return w.typeError(v, "list", path, line)
		}
		out := make([]any, len(v.items))
		for i, it := range v.items {
			out[i] = w.walk(it, t.Elem(), path+"["+strconv.Itoa(i)+"]", it.line)
		}
		return out
	case reflect.String:
		if v.kind != String {
			return w.typeError(v, "string", path, line)
		}
		return v.str
	case reflect.Bool:
		if v.kind == Bool {
			return v.b
		}
		if v.kind == String && v.plain {
			// YAML 1.1 booleans, as kubectl's YAML decoder reads them.
			switch v.str {
			case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
				return true
			case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
				return false
			}
		}
		return w.typeError(v, "boolean", path, line)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.kind != Int {
			return w.typeError(v, "integer", path, line)
		}
		bits := t.Bits()
		lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
		if v.i < lo || v.i > hi {
			w.errorAt(path, line, fmt.Sprintf("invalid value %d: out of range for a %d-bit integer", v.i, bits))
			return nil
		}
		return v.i
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.kind != Int {
			return w.typeError(v, "integer", path, line)
		}
		if v.i < 0 || (t.Bits() < 64 && v.i >= int64(1)<<t.Bits()) {
			w.errorAt(path, line, fmt.Sprintf("invalid value %d: out of range for an unsigned %d-bit integer", v.i, t.Bits()))
			return nil
		}
		return v.i
	case reflect.Float32, reflect.Float64:
		switch v.kind {
		case Int:
			return v.i
		case Float:
			return v.f
		}
		return w.typeError(v, "number", path, line)
	}
	return v.Any()
}

func (w *Checker) errorAt(path string, line int, reason string) {
	if line <= 0 {
		line = w.Lines.Line(path)
	}
	w.Problems = append(w.Problems, events.FieldError{Field: path, Line: line, Reason: reason})
}

func (w *Checker) typeError(v *Node, want, path string, line int) any {
	w.errorAt(path, line, fmt.Sprintf("invalid type: expected %s, got %s", want, v.Describe()))
	return nil
}

// unknownField words the error for a field the type does not declare, with
// the nearest declared name when one is close.
func unknownField(key string, names []string) string {
	msg := fmt.Sprintf("unknown field %q", key)
	if s := Suggest(key, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

// Suggest returns the name in names nearest to key (the same but for
// case, or a few edits away), or "" when none is close.
func Suggest(key string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
		if d := distance(strings.ToLower(key), strings.ToLower(n)); d < bestD && d*3 <= len(n) {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the Levenshtein distance, bounded to short keys.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// structInfo lists the JSON fields of a struct type, inline embeddings
// flattened (shallower fields win, as in encoding/json).
type structInfo struct {
	fields map[string]reflect.Type
	names  []string
}

var structCache sync.Map // reflect.Type -> *structInfo

func fieldsOf(t reflect.Type) *structInfo {
	if info, ok := structCache.Load(t); ok {
		return info.(*structInfo)
	}
	info := &structInfo{fields: map[string]reflect.Type{}}
	collectFields(t, info, 0)
	structCache.Store(t, info)
	return info
}

func collectFields(t reflect.Type, info *structInfo, depth int) {
	if depth > 8 {
		return
	}
	var inline []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				inline = append(inline, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := info.fields[name]; !dup {
			info.fields[name] = f.Type
			info.names = append(info.names, name)
		}
	}
	for _, ft := range inline {
		collectFields(ft, info, depth+1)
	}
}
