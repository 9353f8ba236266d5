package strictyaml

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// CheckPlain is Check for a value that did not come from a file and is
// made of plain JSON values only (map[string]any, []any, string, float64,
// int64, bool, nil: what a JSON decoder produces), for the common case
// that nothing in it is wrong. It walks x itself instead of a tree built
// from it (FromGo), and returns what Check would return for FromGo(x),
// with ok true. To spare the copies, the result is x, changed in place
// where Check's result differs: a null field left out, an integral
// float64 read as int64.
//
// At the first problem, or at anything it does not judge itself (a value
// of another Go type, a skipped path below the top level), it stops and
// returns ok false: the caller then checks x with FromGo and Check, which
// name every problem in order. x may have been changed in place by then,
// only as above, which changes nothing Check reports. Check's walk is the
// definition of the rules; plain_test.go holds the two equal.
func (w *Checker) CheckPlain(x any, t reflect.Type) (any, bool) {
	for k := range w.Skip {
		if strings.ContainsAny(k, ".[") {
			return nil, false
		}
	}
	return w.plain(x, t, true, 0)
}

// plainDepth bounds the recursion as FromGo does; deeper is left to it.
const plainDepth = 10000

// plain checks x against t; top says x is the document (the level Skip's
// paths name).
func (w *Checker) plain(x any, t reflect.Type, top bool, depth int) (any, bool) {
	if depth > plainDepth {
		return nil, false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := x.(type) {
	case nil:
		return nil, true
	case map[string]any: // a nil map or list is null to FromGo
		if v == nil {
			return nil, true
		}
	case []any:
		if v == nil {
			return nil, true
		}
	}
	if decodesItself(t) {
		raw, ok := plainAny(x, depth)
		if !ok {
			return nil, false
		}
		if s, isString := raw.(string); t == quantityType && isString && plainJSONString(s) {
			_, err := resource.ParseQuantity(strings.TrimSpace(s))
			return raw, err == nil
		}
		data, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(data, reflect.New(t).Interface())
		}
		return raw, err == nil
	}
	switch t.Kind() {
	case reflect.Interface:
		return plainAny(x, depth)
	case reflect.Struct:
		m, isMap := x.(map[string]any)
		if !isMap {
			return nil, false
		}
		info := fieldsOf(t)
		for k, v := range m {
			if top && w.Skip[k] {
				if m[k], isMap = plainAny(v, depth+1); !isMap {
					return nil, false
				}
				continue
			}
			ft, known := info.fields[k]
			if !known {
				if !w.Open[t] {
					return nil, false
				}
				if m[k], isMap = plainAny(v, depth+1); !isMap {
					return nil, false
				}
				continue
			}
			if !w.setChecked(m, k, v, ft, depth) {
				return nil, false
			}
		}
		return m, true
	case reflect.Map:
		m, isMap := x.(map[string]any)
		if !isMap {
			return nil, false
		}
		for k, v := range m {
			if !w.setChecked(m, k, v, t.Elem(), depth) {
				return nil, false
			}
		}
		return m, true
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			s, isString := x.(string)
			if !isString {
				return nil, false
			}
			_, err := base64.StdEncoding.DecodeString(s)
			return s, err == nil
		}
		list, isList := x.([]any)
		if !isList {
			return nil, false
		}
		for i, it := range list {
			v, ok := w.plain(it, t.Elem(), false, depth+1)
			if !ok {
				return nil, false
			}
			list[i] = v
		}
		return list, true
	case reflect.String:
		s, isString := x.(string)
		return s, isString
	case reflect.Bool:
		b, isBool := x.(bool)
		return b, isBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, isInt := plainInt(x)
		bits := t.Bits()
		return i, isInt && i >= -(int64(1)<<(bits-1)) && i <= int64(1)<<(bits-1)-1
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, isInt := plainInt(x)
		return i, isInt && i >= 0 && (t.Bits() == 64 || i < int64(1)<<t.Bits())
	case reflect.Float32, reflect.Float64:
		if i, isInt := plainInt(x); isInt {
			return i, true
		}
		f, isFloat := x.(float64)
		return f, isFloat && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return plainAny(x, depth)
}

// setChecked checks m[k] against t and stores the result, leaving the key
// out for null as Check does.
func (w *Checker) setChecked(m map[string]any, k string, v any, t reflect.Type, depth int) bool {
	c, ok := w.plain(v, t, false, depth+1)
	switch {
	case !ok:
		return false
	case c == nil:
		delete(m, k)
	default:
		m[k] = c
	}
	return true
}

// plainInt is x as an integer the way FromGo reads it: an int64, or a
// float64 that is integral and exactly representable.
func plainInt(x any) (int64, bool) {
	switch n := x.(type) {
	case int64:
		return n, true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

// plainAny is Node.Any of FromGo(x), made in place: integral float64s
// become int64; ok is false for anything but plain JSON values (and for
// what FromGo would report: infinities, NaN).
func plainAny(x any, depth int) (any, bool) {
	if depth > plainDepth {
		return nil, false
	}
	switch v := x.(type) {
	case nil, string, bool, int64:
		return v, true
	case float64:
		if i, isInt := plainInt(v); isInt {
			return i, true
		}
		return v, !math.IsInf(v, 0) && !math.IsNaN(v)
	case map[string]any:
		if v == nil {
			return nil, true
		}
		for k, e := range v {
			c, ok := plainAny(e, depth+1)
			if !ok {
				return nil, false
			}
			v[k] = c
		}
		return v, true
	case []any:
		if v == nil {
			return nil, true
		}
		for i, e := range v {
			c, ok := plainAny(e, depth+1)
			if !ok {
				return nil, false
			}
			v[i] = c
		}
		return v, true
	}
	return nil, false
}
