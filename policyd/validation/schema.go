package validation

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
)

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

// walker checks a tree against a Go type the way a strict JSON decoder
// would, and returns the tree as plain Go values with every unknown or
// ill-typed field left out (so the typed decode that follows never sees
// them twice).
type walker struct {
	rep *report
	// skip holds paths that are copied without being checked (status of
	// built-in kinds).
	skip map[string]bool
	// open holds struct types whose unknown fields are accepted as they are
	// (the lenient ResourceBinding shape).
	open map[reflect.Type]bool
}

func (w *walker) walk(v *value, t reflect.Type, path string, line int) any {
	if line > 0 {
		w.rep.record(path, line)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v.kind == vNull {
		return nil // null is the zero value of any field, as in JSON
	}
	if decodesItself(t) {
		// Quantity, IntOrString, Time, RawMessage, RawExtension...: let the
		// type judge its own JSON.
		raw := v.toAny()
		if t == quantityType && v.kind == vStr && plainJSONString(v.str) {
			// What Quantity.UnmarshalJSON does with "<s>", without the round trip.
			if _, err := resource.ParseQuantity(strings.TrimSpace(v.str)); err != nil {
				w.rep.errorAt(path, line, "invalid value: "+strings.TrimPrefix(err.Error(), "json: "))
				return nil
			}
			return raw
		}
		data, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(data, reflect.New(t).Interface())
		}
		if err != nil {
			w.rep.errorAt(path, line, "invalid value: "+strings.TrimPrefix(err.Error(), "json: "))
			return nil
		}
		return raw
	}
	switch t.Kind() {
	case reflect.Interface:
		return v.toAny()
	case reflect.Struct:
		if v.kind != vMap {
			return w.typeError(v, "object", path, line)
		}
		info := fieldsOf(t)
		out := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			cp, kl := joinField(path, k), v.keyLines[i]
			if w.skip[cp] {
				w.rep.record(cp, kl)
				out[k] = v.vals[i].toAny()
				continue
			}
			ft, ok := info.fields[k]
			if !ok {
				if w.open[t] {
					w.rep.record(cp, kl)
					out[k] = v.vals[i].toAny()
					continue
				}
				w.rep.errorAt(cp, kl, unknownField(k, info.names))
				continue
			}
			if x := w.walk(v.vals[i], ft, cp, kl); x != nil {
				out[k] = x
			}
		}
		return out
	case reflect.Map:
		if v.kind != vMap {
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
			if v.kind != vStr {
				return w.typeError(v, "base64 string", path, line)
			}
			if _, err := base64.StdEncoding.DecodeString(v.str); err != nil {
				w.rep.errorAt(path, line, "invalid value: not valid base64: "+err.Error())
				return nil
			}
			return v.str
		}
		if v.kind != vSeq {
			return w.typeError(v, "list", path, line)
		}
		out := make([]any, len(v.items))
		for i, it := range v.items {
			out[i] = w.walk(it, t.Elem(), path+"["+strconv.Itoa(i)+"]", it.line)
		}
		return out
	case reflect.String:
		if v.kind != vStr {
			return w.typeError(v, "string", path, line)
		}
		return v.str
	case reflect.Bool:
		if v.kind == vBool {
			return v.b
		}
		if v.kind == vStr && v.plain {
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
		if v.kind != vInt {
			return w.typeError(v, "integer", path, line)
		}
		bits := t.Bits()
		lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
		if v.i < lo || v.i > hi {
			w.rep.errorAt(path, line, fmt.Sprintf("invalid value %d: out of range for a %d-bit integer", v.i, bits))
			return nil
		}
		return v.i
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.kind != vInt {
			return w.typeError(v, "integer", path, line)
		}
		if v.i < 0 || (t.Bits() < 64 && v.i >= int64(1)<<t.Bits()) {
			w.rep.errorAt(path, line, fmt.Sprintf("invalid value %d: out of range for an unsigned %d-bit integer", v.i, t.Bits()))
			return nil
		}
		return v.i
	case reflect.Float32, reflect.Float64:
		switch v.kind {
		case vInt:
			return v.i
		case vFloat:
			return v.f
		}
		return w.typeError(v, "number", path, line)
	}
	return v.toAny()
}

func (w *walker) typeError(v *value, want, path string, line int) any {
	w.rep.errorAt(path, line, fmt.Sprintf("invalid type: expected %s, got %s", want, v.describe()))
	return nil
}

// unknownField words the error for a field the type does not declare, with
// the nearest declared name when one is close.
func unknownField(key string, names []string) string {
	msg := fmt.Sprintf("unknown field %q", key)
	if s := suggest(key, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

func suggest(key string, names []string) string {
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
