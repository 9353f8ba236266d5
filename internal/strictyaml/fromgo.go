package strictyaml

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/events"
)

// FromGo converts a decoded Go value (what encoding/json produces, or what
// a caller built) into a tree without lines, for Check to judge an object
// that did not come from a file. Mapping keys are sorted so that the order
// of problems is deterministic. Values JSON cannot hold (infinities, NaN,
// channels...) are problems and become null.
func FromGo(x any) (*Node, []events.FieldError) {
	var problems []events.FieldError
	c := goConverter{problems: &problems}
	// One slab of exactly the nodes needed (a Deployment has ~30): slabs
	// of 64 were a sixth of what policyd allocates per template.
	if n := plainNodes(x, slabLimit); n > 0 {
		c.slab = make([]Node, n)
	}
	return c.convert(x, nil, 0), problems
}

// slabLimit: trees larger than this take their nodes in slabs of 64.
const slabLimit = 4096

// plainNodes counts the nodes of a tree of plain JSON values, up to limit
// (0 past it).
func plainNodes(x any, limit int) int {
	n := 0
	var walk func(x any) bool
	walk = func(x any) bool {
		if n++; n > limit {
			return false
		}
		switch t := x.(type) {
		case map[string]any:
			for _, v := range t {
				if !walk(v) {
					return false
				}
			}
		case []any:
			for _, v := range t {
				if !walk(v) {
					return false
				}
			}
		}
		return true
	}
	if !walk(x) {
		return 0
	}
	return n
}

// goPath is a field path built only when a problem needs it: converting a
// document without problems allocates no path strings.
type goPath struct {
	parent *goPath
	name   string
	index  int // -1: a field name
}

func (p *goPath) String() string {
	if p == nil {
		return ""
	}
	parent := p.parent.String()
	if p.index >= 0 {
		return parent + "[" + strconv.Itoa(p.index) + "]"
	}
	return joinField(parent, p.name)
}

// goConverter converts what a JSON decoder produces (map[string]any,
// []any, string, float64, bool, nil) without reflection, taking its nodes
// from slabs; anything else goes the reflective way.
type goConverter struct {
	problems *[]events.FieldError
	slab     []Node
}

func (c *goConverter) node(kind Kind) *Node {
	if len(c.slab) == 0 {
		c.slab = make([]Node, 64)
	}
	v := &c.slab[0]
	c.slab = c.slab[1:]
	v.kind = kind
	return v
}

func (c *goConverter) convert(x any, at *goPath, depth int) *Node {
	if depth > 10000 {
		*c.problems = append(*c.problems, events.FieldError{Field: at.String(), Reason: "value nested too deeply"})
		return c.node(Null)
	}
	switch t := x.(type) {
	case nil:
		return c.node(Null)
	case string:
		v := c.node(String)
		v.str = t
		return v
	case bool:
		v := c.node(Bool)
		v.b, v.str = t, strconv.FormatBool(t)
		return v
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) || t != math.Trunc(t) || math.Abs(t) >= 1<<53 {
			return fromGoReflect(t, at.String(), c.problems, depth)
		}
		// JSON numbers decoded into any are float64: 3 means 3.
		v := c.node(Int)
		v.i, v.str = int64(t), strconv.FormatFloat(t, 'g', -1, 64)
		return v
	case map[string]any:
		if t == nil {
			return c.node(Null)
		}
		v := c.node(Map)
		v.keys = make([]string, 0, len(t))
		for k := range t {
			v.keys = append(v.keys, k)
		}
		sort.Strings(v.keys)
		v.keyLines = make([]int, len(t))
		v.vals = make([]*Node, len(t))
		for i, k := range v.keys {
			v.vals[i] = c.convert(t[k], &goPath{parent: at, name: k, index: -1}, depth+1)
		}
		return v
	case []any:
		if t == nil {
			return c.node(Null)
		}
		v := c.node(Seq)
		v.items = make([]*Node, len(t))
		for i, it := range t {
			v.items[i] = c.convert(it, &goPath{parent: at, index: i}, depth+1)
		}
		return v
	}
	return fromGoReflect(x, at.String(), c.problems, depth)
}

// fromGoReflect converts any Go value by reflection.
func fromGoReflect(x any, path string, problems *[]events.FieldError, depth int) *Node {
	if depth > 10000 {
		*problems = append(*problems, events.FieldError{Field: path, Reason: "value nested too deeply"})
		return &Node{kind: Null}
	}
	switch t := x.(type) {
	case nil:
		return &Node{kind: Null}
	case string:
		return &Node{kind: String, str: t}
	case bool:
		return &Node{kind: Bool, b: t, str: strconv.FormatBool(t)}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return &Node{kind: Int, i: i, str: t.String()}
		}
		f, err := t.Float64()
		if err != nil {
			return &Node{kind: String, str: t.String()}
		}
		return &Node{kind: Float, f: f, str: t.String()}
	case json.RawMessage:
		var y any
		dec := json.NewDecoder(strings.NewReader(string(t)))
		dec.UseNumber()
		if err := dec.Decode(&y); err != nil {
			*problems = append(*problems, events.FieldError{Field: path, Reason: "invalid JSON: " + err.Error()})
			return &Node{kind: Null}
		}
		return fromGoReflect(y, path, problems, depth+1)
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return &Node{kind: Null}
		}
		return fromGoReflect(rv.Elem().Interface(), path, problems, depth+1)
	case reflect.String:
		return &Node{kind: String, str: rv.String()}
	case reflect.Bool:
		return &Node{kind: Bool, b: rv.Bool(), str: strconv.FormatBool(rv.Bool())}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &Node{kind: Int, i: rv.Int(), str: strconv.FormatInt(rv.Int(), 10)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return &Node{kind: Float, f: float64(u), str: strconv.FormatUint(u, 10)}
		}
		return &Node{kind: Int, i: int64(u), str: strconv.FormatUint(u, 10)}
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			*problems = append(*problems, events.FieldError{Field: path, Reason: "invalid value " + s + ": JSON has no infinities or NaN"})
			return &Node{kind: Null}
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			// JSON numbers decoded into any are float64: 3 means 3.
			return &Node{kind: Int, i: int64(f), str: s}
		}
		return &Node{kind: Float, f: f, str: s}
	case reflect.Map:
		if rv.IsNil() {
			return &Node{kind: Null}
		}
		v := &Node{kind: Map}
		keys := rv.MapKeys()
		names := make([]string, len(keys))
		byName := make(map[string]reflect.Value, len(keys))
		for i, k := range keys {
			names[i] = fmt.Sprint(k.Interface())
			byName[names[i]] = k
		}
		sort.Strings(names)
		for _, name := range names {
			v.keys = append(v.keys, name)
			v.keyLines = append(v.keyLines, 0)
			v.vals = append(v.vals, fromGoReflect(rv.MapIndex(byName[name]).Interface(), joinField(path, name), problems, depth+1))
		}
		return v
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return &Node{kind: Null}
		}
		v := &Node{kind: Seq}
		for i := 0; i < rv.Len(); i++ {
			v.items = append(v.items, fromGoReflect(rv.Index(i).Interface(), fmt.Sprintf("%s[%d]", path, i), problems, depth+1))
		}
		return v
	}
	*problems = append(*problems, events.FieldError{Field: path, Reason: fmt.Sprintf("unsupported Go value of type %T", x)})
	return &Node{kind: Null}
}

// joinField appends a field name to a path.
func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
