package validation

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// vkind is the JSON type of a tree value.
type vkind int

const (
	vNull vkind = iota
	vStr
	vInt
	vFloat
	vBool
	vMap
	vSeq
)

// value is one node of a document, in JSON's data model, with the line it
// came from (0 when it did not come from a file). Mapping keys keep their
// order so that problems are reported in reading order.
type value struct {
	kind  vkind
	line  int
	str   string // vStr; for every scalar also the text as written
	i     int64
	f     float64
	b     bool
	plain bool // an unquoted YAML scalar

	keys     []string
	keyLines []int
	vals     []*value
	items    []*value
}

// get returns the value under key in a mapping, or nil.
func (v *value) get(key string) *value {
	if v == nil || v.kind != vMap {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// keyLine returns the line of key in a mapping, or the mapping's own line.
func (v *value) keyLine(key string) int {
	for i, k := range v.keys {
		if k == key {
			return v.keyLines[i]
		}
	}
	return v.line
}

// describe names the value's type (and the value, for scalars) in messages.
func (v *value) describe() string {
	switch v.kind {
	case vNull:
		return "null"
	case vStr:
		return fmt.Sprintf("string %q", truncate(v.str))
	case vInt:
		return fmt.Sprintf("integer %d", v.i)
	case vFloat:
		return "number " + v.str
	case vBool:
		return fmt.Sprintf("boolean %t", v.b)
	case vMap:
		return "object"
	default:
		return "list"
	}
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:61] + "..."
	}
	return s
}

// toAny converts the tree into plain JSON-compatible Go values:
// map[string]any, []any, string, int64, float64, bool and nil.
func (v *value) toAny() any {
	if v == nil {
		return nil
	}
	switch v.kind {
	case vStr:
		return v.str
	case vInt:
		return v.i
	case vFloat:
		return v.f
	case vBool:
		return v.b
	case vMap:
		m := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			m[k] = v.vals[i].toAny()
		}
		return m
	case vSeq:
		s := make([]any, len(v.items))
		for i, it := range v.items {
			s[i] = it.toAny()
		}
		return s
	}
	return nil
}

// maxNodes bounds the size of one document after alias expansion, so that
// a "billion laughs" document costs an error, not the machine.
const maxNodes = 1 << 18

// treeBuilder converts a yaml.Node tree into values, expanding aliases and
// merge keys and reporting what JSON cannot represent.
type treeBuilder struct {
	lineOffset int
	nodes      int
	active     map[*yaml.Node]bool
	problems   []Problem
	// segs is the path to the value being built; it is only turned into a
	// string when a problem needs it.
	segs []segment
}

// segment is one step of a path: a key, or an index when key is unset.
type segment struct {
	key   string
	index int
	isKey bool
}

func (b *treeBuilder) push(s segment) { b.segs = append(b.segs, s) }
func (b *treeBuilder) pop()           { b.segs = b.segs[:len(b.segs)-1] }

func (b *treeBuilder) path() string {
	var sb strings.Builder
	for _, s := range b.segs {
		if s.isKey {
			if sb.Len() > 0 {
				sb.WriteByte('.')
			}
			sb.WriteString(s.key)
		} else {
			sb.WriteString("[" + strconv.Itoa(s.index) + "]")
		}
	}
	return sb.String()
}

func (b *treeBuilder) fail(line int, format string, args ...any) {
	b.problems = append(b.problems, Problem{Field: b.path(), Line: line, Reason: fmt.Sprintf(format, args...)})
}

// build returns nil only when it reported a problem that makes the rest of
// the document meaningless (too large, a cyclic alias).
func (b *treeBuilder) build(n *yaml.Node) *value {
	b.nodes++
	if b.nodes > maxNodes {
		if b.nodes == maxNodes+1 {
			b.fail(n.Line+b.lineOffset, "document too large: more than %d values after expanding aliases", maxNodes)
		}
		return nil
	}
	line := n.Line + b.lineOffset
	if n.Anchor != "" && !b.active[n] {
		// An anchored value may not contain an alias to itself.
		b.active[n] = true
		defer delete(b.active, n)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &value{kind: vNull, line: line}
		}
		return b.build(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil {
			return &value{kind: vNull, line: line}
		}
		if b.active[n.Alias] {
			b.fail(line, "alias *%s refers to a value that contains it", n.Value)
			return nil
		}
		b.active[n.Alias] = true
		defer delete(b.active, n.Alias)
		v := b.build(n.Alias)
		if v == nil {
			return nil
		}
		// The value keeps the anchor's lines; report the alias's own line for it.
		cp := *v
		cp.line = line
		return &cp
	case yaml.ScalarNode:
		return b.scalar(n, line)
	case yaml.SequenceNode:
		v := &value{kind: vSeq, line: line, items: make([]*value, 0, len(n.Content))}
		for i, c := range n.Content {
			b.push(segment{index: i})
			it := b.build(c)
			b.pop()
			if it == nil {
				return nil
			}
			v.items = append(v.items, it)
		}
		return v
	case yaml.MappingNode:
		return b.mapping(n, line)
	}
	return &value{kind: vNull, line: line}
}

func (b *treeBuilder) mapping(n *yaml.Node, line int) *value {
	v := &value{kind: vMap, line: line}
	seen := map[string]bool{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.ShortTag() == "!!merge" {
			merges = append(merges, vn)
			continue
		}
		for kn.Kind == yaml.AliasNode && kn.Alias != nil && !b.active[kn.Alias] {
			kn = kn.Alias
		}
		kline := kn.Line + b.lineOffset
		if kn.Kind != yaml.ScalarNode {
			b.fail(kline, "mapping key must be a string, got %s", nodeKindName(kn.Kind))
			continue
		}
		key := kn.Value
		b.push(segment{key: key, isKey: true})
		if seen[key] {
			b.fail(kline, "duplicate field %q", key)
			b.pop()
			continue
		}
		seen[key] = true
		cv := b.build(vn)
		b.pop()
		if cv == nil {
			return nil
		}
		v.keys = append(v.keys, key)
		v.keyLines = append(v.keyLines, kline)
		v.vals = append(v.vals, cv)
	}
	// Merge keys (<<: *base) add the keys the mapping does not set itself;
	// earlier merged mappings win over later ones, as YAML 1.1 says.
	for _, mn := range merges {
		var srcs []*yaml.Node
		if mn.Kind == yaml.SequenceNode {
			srcs = mn.Content
		} else {
			srcs = []*yaml.Node{mn}
		}
		for _, src := range srcs {
			mv := b.build(src)
			if mv == nil {
				return nil
			}
			if mv.kind != vMap {
				b.fail(src.Line+b.lineOffset, "merge key (<<) needs an object, not %s", mv.describe())
				continue
			}
			for i, k := range mv.keys {
				if seen[k] {
					continue
				}
				seen[k] = true
				v.keys = append(v.keys, k)
				v.keyLines = append(v.keyLines, mv.keyLines[i])
				v.vals = append(v.vals, mv.vals[i])
			}
		}
	}
	return v
}

func (b *treeBuilder) scalar(n *yaml.Node, line int) *value {
	v := &value{kind: vStr, line: line, str: n.Value, plain: n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0}
	switch n.ShortTag() {
	case "!!null":
		v.kind = vNull
	case "!!bool":
		var x bool
		if err := n.Decode(&x); err == nil {
			v.kind, v.b = vBool, x
		}
	case "!!int":
		var x any
		if err := n.Decode(&x); err == nil {
			switch x := x.(type) {
			case int:
				v.kind, v.i = vInt, int64(x)
			case int64:
				v.kind, v.i = vInt, x
			case uint64:
				v.kind, v.f = vFloat, float64(x)
			case float64:
				v.kind, v.f = vFloat, x
			}
		}
	case "!!float":
		var x float64
		if err := n.Decode(&x); err == nil {
			if math.IsInf(x, 0) || math.IsNaN(x) {
				b.fail(line, "invalid value %s: JSON has no infinities or NaN", n.Value)
				v.kind = vNull
			} else {
				v.kind, v.f = vFloat, x
			}
		}
	}
	return v
}

func nodeKindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.AliasNode:
		return "an alias"
	}
	return "a scalar"
}

// fromGo converts a decoded Go value (what encoding/json or a caller built)
// into a tree without lines. Mapping keys are sorted so that the order of
// problems is deterministic.
func fromGo(x any, path string, problems *[]Problem, depth int) *value {
	if path == "" && depth == 0 {
		c := goConverter{problems: problems}
		return c.convert(x, nil, 0)
	}
	return fromGoReflect(x, path, problems, depth)
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
	problems *[]Problem
	slab     []value
}

func (c *goConverter) node(kind vkind) *value {
	if len(c.slab) == 0 {
		c.slab = make([]value, 64)
	}
	v := &c.slab[0]
	c.slab = c.slab[1:]
	v.kind = kind
	return v
}

func (c *goConverter) convert(x any, at *goPath, depth int) *value {
	if depth > 10000 {
		*c.problems = append(*c.problems, Problem{Field: at.String(), Reason: "value nested too deeply"})
		return c.node(vNull)
	}
	switch t := x.(type) {
	case nil:
		return c.node(vNull)
	case string:
		v := c.node(vStr)
		v.str = t
		return v
	case bool:
		v := c.node(vBool)
		v.b, v.str = t, strconv.FormatBool(t)
		return v
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) || t != math.Trunc(t) || math.Abs(t) >= 1<<53 {
			return fromGoReflect(t, at.String(), c.problems, depth)
		}
		// JSON numbers decoded into any are float64: 3 means 3.
		v := c.node(vInt)
		v.i, v.str = int64(t), strconv.FormatFloat(t, 'g', -1, 64)
		return v
	case map[string]any:
		if t == nil {
			return c.node(vNull)
		}
		v := c.node(vMap)
		v.keys = make([]string, 0, len(t))
		for k := range t {
			v.keys = append(v.keys, k)
		}
		sort.Strings(v.keys)
		v.keyLines = make([]int, len(t))
		v.vals = make([]*value, len(t))
		for i, k := range v.keys {
			v.vals[i] = c.convert(t[k], &goPath{parent: at, name: k, index: -1}, depth+1)
		}
		return v
	case []any:
		if t == nil {
			return c.node(vNull)
		}
		v := c.node(vSeq)
		v.items = make([]*value, len(t))
		for i, it := range t {
			v.items[i] = c.convert(it, &goPath{parent: at, index: i}, depth+1)
		}
		return v
	}
	return fromGoReflect(x, at.String(), c.problems, depth)
}

// fromGoReflect converts any Go value by reflection.
func fromGoReflect(x any, path string, problems *[]Problem, depth int) *value {
	if depth > 10000 {
		*problems = append(*problems, Problem{Field: path, Reason: "value nested too deeply"})
		return &value{kind: vNull}
	}
	switch t := x.(type) {
	case nil:
		return &value{kind: vNull}
	case string:
		return &value{kind: vStr, str: t}
	case bool:
		return &value{kind: vBool, b: t, str: strconv.FormatBool(t)}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return &value{kind: vInt, i: i, str: t.String()}
		}
		f, err := t.Float64()
		if err != nil {
			return &value{kind: vStr, str: t.String()}
		}
		return &value{kind: vFloat, f: f, str: t.String()}
	case json.RawMessage:
		var y any
		dec := json.NewDecoder(strings.NewReader(string(t)))
		dec.UseNumber()
		if err := dec.Decode(&y); err != nil {
			*problems = append(*problems, Problem{Field: path, Reason: "invalid JSON: " + err.Error()})
			return &value{kind: vNull}
		}
		return fromGoReflect(y, path, problems, depth+1)
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return &value{kind: vNull}
		}
		return fromGoReflect(rv.Elem().Interface(), path, problems, depth+1)
	case reflect.String:
		return &value{kind: vStr, str: rv.String()}
	case reflect.Bool:
		return &value{kind: vBool, b: rv.Bool(), str: strconv.FormatBool(rv.Bool())}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &value{kind: vInt, i: rv.Int(), str: strconv.FormatInt(rv.Int(), 10)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return &value{kind: vFloat, f: float64(u), str: strconv.FormatUint(u, 10)}
		}
		return &value{kind: vInt, i: int64(u), str: strconv.FormatUint(u, 10)}
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			*problems = append(*problems, Problem{Field: path, Reason: "invalid value " + s + ": JSON has no infinities or NaN"})
			return &value{kind: vNull}
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			// JSON numbers decoded into any are float64: 3 means 3.
			return &value{kind: vInt, i: int64(f), str: s}
		}
		return &value{kind: vFloat, f: f, str: s}
	case reflect.Map:
		if rv.IsNil() {
			return &value{kind: vNull}
		}
		v := &value{kind: vMap}
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
			return &value{kind: vNull}
		}
		v := &value{kind: vSeq}
		for i := 0; i < rv.Len(); i++ {
			v.items = append(v.items, fromGoReflect(rv.Index(i).Interface(), fmt.Sprintf("%s[%d]", path, i), problems, depth+1))
		}
		return v
	}
	*problems = append(*problems, Problem{Field: path, Reason: fmt.Sprintf("unsupported Go value of type %T", x)})
	return &value{kind: vNull}
}

// joinField appends a field name to a path.
func joinField(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
