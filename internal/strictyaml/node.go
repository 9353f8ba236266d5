package strictyaml

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flotilla-io/flotilla/events"
)

// Kind is the JSON type of a Node.
type Kind int

// The JSON types.
const (
	Null Kind = iota
	String
	Int
	Float
	Bool
	Map
	Seq
)

// Node is one value of a document, in JSON's data model, with the line it
// came from (0 when it did not come from a file: FromGo). Mapping keys keep
// their order so that problems are reported in reading order. A Node is
// not changed once built; it is safe for concurrent reads.
type Node struct {
	kind  Kind
	line  int
	str   string // String; for every scalar also the text as written
	i     int64
	f     float64
	b     bool
	plain bool // an unquoted YAML scalar
	block bool // a literal (|) or folded (>) YAML scalar

	keys     []string
	keyLines []int
	vals     []*Node
	items    []*Node
}

// Kind is the node's JSON type.
func (v *Node) Kind() Kind { return v.kind }

// Line is the 1-based line the node was read from; 0 when unknown.
func (v *Node) Line() int { return v.line }

// Block reports whether the node is a literal (|) or folded (>) scalar,
// whose text starts on the line after Line.
func (v *Node) Block() bool { return v != nil && v.block }

// Str is a String node's value, or the text of any other scalar as it was
// written.
func (v *Node) Str() string { return v.str }

// Get returns the value under key in a mapping, or nil.
func (v *Node) Get(key string) *Node {
	if v == nil || v.kind != Map {
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// Items returns the elements of a sequence, or nil.
func (v *Node) Items() []*Node {
	if v == nil || v.kind != Seq {
		return nil
	}
	return v.items
}

// KeyLine returns the line of key in a mapping, or the mapping's own line.
func (v *Node) KeyLine(key string) int {
	for i, k := range v.keys {
		if k == key {
			return v.keyLines[i]
		}
	}
	return v.line
}

// Describe names the value's type (and the value, for scalars) in
// messages: `string "x"`, `integer 3`, `object`, `list`...
func (v *Node) Describe() string {
	switch v.kind {
	case Null:
		return "null"
	case String:
		return fmt.Sprintf("string %q", Truncate(v.str))
	case Int:
		return fmt.Sprintf("integer %d", v.i)
	case Float:
		return "number " + v.str
	case Bool:
		return fmt.Sprintf("boolean %t", v.b)
	case Map:
		return "object"
	default:
		return "list"
	}
}

// Truncate shortens a value quoted in an error message to 64 bytes.
func Truncate(s string) string {
	if len(s) > 64 {
		return s[:61] + "..."
	}
	return s
}

// Any converts the tree into plain JSON-compatible Go values:
// map[string]any, []any, string, int64, float64, bool and nil.
func (v *Node) Any() any {
	if v == nil {
		return nil
	}
	switch v.kind {
	case String:
		return v.str
	case Int:
		return v.i
	case Float:
		return v.f
	case Bool:
		return v.b
	case Map:
		m := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			m[k] = v.vals[i].Any()
		}
		return m
	case Seq:
		s := make([]any, len(v.items))
		for i, it := range v.items {
			s[i] = it.Any()
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
	problems   []events.FieldError
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
	b.problems = append(b.problems, events.FieldError{Field: b.path(), Line: line, Reason: fmt.Sprintf(format, args...)})
}

// build returns nil only when it reported a problem that makes the rest of
// the document meaningless (too large, a cyclic alias).
func (b *treeBuilder) build(n *yaml.Node) *Node {
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
			return &Node{kind: Null, line: line}
		}
		return b.build(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil {
			return &Node{kind: Null, line: line}
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
		v := &Node{kind: Seq, line: line, items: make([]*Node, 0, len(n.Content))}
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
	return &Node{kind: Null, line: line}
}

func (b *treeBuilder) mapping(n *yaml.Node, line int) *Node {
	v := &Node{kind: Map, line: line}
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
			if mv.kind != Map {
				b.fail(src.Line+b.lineOffset, "merge key (<<) needs an object, not %s", mv.Describe())
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

func (b *treeBuilder) scalar(n *yaml.Node, line int) *Node {
	v := &Node{kind: String, line: line, str: n.Value, plain: n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0,
		block: n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0}
	switch n.ShortTag() {
	case "!!null":
		v.kind = Null
	case "!!bool":
		var x bool
		if err := n.Decode(&x); err == nil {
			v.kind, v.b = Bool, x
		}
	case "!!int":
		var x any
		if err := n.Decode(&x); err == nil {
			switch x := x.(type) {
			case int:
				v.kind, v.i = Int, int64(x)
			case int64:
				v.kind, v.i = Int, x
			case uint64:
				v.kind, v.f = Float, float64(x)
			case float64:
				v.kind, v.f = Float, x
			}
		}
	case "!!float":
		var x float64
		if err := n.Decode(&x); err == nil {
			if math.IsInf(x, 0) || math.IsNaN(x) {
				b.fail(line, "invalid value %s: JSON has no infinities or NaN", n.Value)
				v.kind = Null
			} else {
				v.kind, v.f = Float, x
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
