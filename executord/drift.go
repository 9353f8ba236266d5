package executord

import (
	"fmt"
	"reflect"
)

// Drift compares what Flotilla applied with what the member holds and
// returns the path of the first field that differs, or "" when the member
// still holds every field Flotilla set. Only fields present in desired are
// compared (the API server adds defaults and status; those are not drift).
// Lists are compared element by element and must keep their length.
func Drift(desired, live map[string]any) string {
	return driftAt("", desired, live)
}

func driftAt(path string, desired, live any) string {
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return orRoot(path)
		}
		for k, dv := range d {
			if path == "" && k == "status" {
				continue
			}
			lv, ok := l[k]
			if !ok {
				if isEmpty(dv) {
					continue // an empty map/list/string the server drops is not drift
				}
				return join(path, k)
			}
			if p := driftAt(join(path, k), dv, lv); p != "" {
				return p
			}
		}
		return ""
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return orRoot(path)
		}
		for i := range d {
			if p := driftAt(fmt.Sprintf("%s[%d]", path, i), d[i], l[i]); p != "" {
				return p
			}
		}
		return ""
	default:
		if scalarEqual(desired, live) {
			return ""
		}
		return orRoot(path)
	}
}

func scalarEqual(a, b any) bool {
	if na, ok := number(a); ok {
		nb, ok := number(b)
		return ok && na == nb
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	case nil:
		return true
	}
	return false
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}
