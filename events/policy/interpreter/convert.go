package interpreter

import (
	"encoding/json"
	"errors"
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// Conversions between objects and Lua values, as Karmada makes them
// (reference features §7.6): objects go in through JSON (nulls vanish,
// numbers become Lua numbers); tables come out through JSON, where an
// empty table is a list, a table needs all-string keys or the keys
// 1..n, and no table may be reached twice.

var (
	errMixedKeys = errors.New("cannot encode mixed or invalid key types")
	errSparse    = errors.New("cannot encode sparse array")
	errNested    = errors.New("cannot encode recursively nested tables to JSON")
)

// emptyTable marks an empty Lua table in a decoded result until restore
// decides what it becomes.
type emptyTable struct{}

// toLua converts a Go value to Lua through its JSON form.
func toLua(l *lua.LState, v any) (lua.LValue, error) {
	switch v.(type) {
	case map[string]any, []any, string, float64, bool, nil:
	default:
		raw, err := json.Marshal(v)
		if err != nil {
			return lua.LNil, err
		}
		v = nil
		if err := json.Unmarshal(raw, &v); err != nil {
			return lua.LNil, err
		}
	}
	return plainToLua(l, v), nil
}

func plainToLua(l *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := l.CreateTable(0, len(x))
		for k, e := range x {
			if e != nil {
				t.RawSetString(k, plainToLua(l, e))
			}
		}
		return t
	case []any:
		t := l.CreateTable(len(x), 0)
		for _, e := range x {
			t.Append(plainToLua(l, e))
		}
		return t
	case string:
		return lua.LString(x)
	case float64:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(float64(x))
	case int:
		return lua.LNumber(float64(x))
	case int32:
		return lua.LNumber(float64(x))
	case json.Number:
		f, _ := x.Float64()
		return lua.LNumber(f)
	case bool:
		return lua.LBool(x)
	case nil:
		return lua.LNil
	}
	var generic any
	if raw, err := json.Marshal(v); err == nil && json.Unmarshal(raw, &generic) == nil {
		return plainToLua(l, generic)
	}
	return lua.LNil
}

// fromLua converts a Lua result to plain Go values (map[string]any, []any,
// string, float64, bool, nil), with emptyTable for every empty table.
func fromLua(v lua.LValue) (any, error) {
	return (&encoder{visited: map[*lua.LTable]bool{}}).value(v)
}

// encoder keeps every table it has seen for the whole result, as the JSON
// encoder Karmada uses does: a table reached twice fails.
type encoder struct{ visited map[*lua.LTable]bool }

func (e *encoder) value(v lua.LValue) (any, error) {
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		return float64(x), nil
	case *lua.LTable:
		return e.table(x)
	}
	return nil, fmt.Errorf("cannot encode %s to JSON", v.Type())
}

func (e *encoder) table(t *lua.LTable) (any, error) {
	if e.visited[t] {
		return nil, errNested
	}
	e.visited[t] = true
	key, val := t.Next(lua.LNil)
	switch key.Type() {
	case lua.LTNil:
		return emptyTable{}, nil
	case lua.LTNumber:
		var out []any
		want := lua.LNumber(1)
		for key != lua.LNil {
			n, ok := key.(lua.LNumber)
			if !ok {
				return nil, errMixedKeys
			}
			if n != want {
				return nil, errSparse
			}
			x, err := e.value(val)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
			want++
			key, val = t.Next(key)
		}
		return out, nil
	case lua.LTString:
		out := map[string]any{}
		for key != lua.LNil {
			s, ok := key.(lua.LString)
			if !ok {
				return nil, errMixedKeys
			}
			x, err := e.value(val)
			if err != nil {
				return nil, err
			}
			out[string(s)] = x
			key, val = t.Next(key)
		}
		return out, nil
	}
	return nil, errMixedKeys
}

// restore decides every empty table of a decoded result: where one of the
// reference objects holds an empty object or list at the same path it
// becomes that, everywhere else the field is deleted (reference features
// §7.6.1). A top-level empty table becomes emptyTop.
func restore(v any, emptyTop any, refs ...any) any {
	if _, ok := v.(emptyTable); ok {
		return emptyTop
	}
	return restoreAt(v, refs)
}

func restoreAt(v any, refs []any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			sub := make([]any, 0, len(refs))
			for _, r := range refs {
				if m, ok := r.(map[string]any); ok {
					if rv, ok := m[k]; ok {
						sub = append(sub, rv)
					}
				}
			}
			if _, ok := e.(emptyTable); ok {
				if empty, found := emptyIn(sub); found {
					x[k] = empty
				} else {
					delete(x, k)
				}
				continue
			}
			x[k] = restoreAt(e, sub)
		}
		return x
	case []any:
		kept := x[:0]
		for i, e := range x {
			sub := make([]any, 0, len(refs))
			for _, r := range refs {
				if l, ok := r.([]any); ok && i < len(l) {
					sub = append(sub, l[i])
				}
			}
			if _, ok := e.(emptyTable); ok {
				if empty, found := emptyIn(sub); found {
					kept = append(kept, empty)
				}
				continue
			}
			kept = append(kept, restoreAt(e, sub))
		}
		return kept
	}
	return v
}

// emptyIn returns the first empty object or list among refs.
func emptyIn(refs []any) (any, bool) {
	for _, r := range refs {
		switch x := r.(type) {
		case map[string]any:
			if len(x) == 0 {
				return map[string]any{}, true
			}
		case []any:
			if len(x) == 0 {
				return []any{}, true
			}
		}
	}
	return nil, false
}

// into decodes a restored result into out through JSON.
func into(v any, out any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// plain makes a Go value plain JSON values (map[string]any, []any, ...),
// so that references compare with what comes back from Lua.
func plain(v any) any {
	switch v.(type) {
	case map[string]any, []any, nil:
		raw, err := json.Marshal(v)
		if err != nil {
			return v
		}
		var out any
		if json.Unmarshal(raw, &out) != nil {
			return v
		}
		return out
	}
	return v
}

// typeName names a Lua value's type for an error message.
func typeName(v lua.LValue) string { return v.Type().String() }
