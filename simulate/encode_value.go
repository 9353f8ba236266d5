package simulate

// The encoding of manifests and of JSON values: what render returns, a
// tree of maps, slices and scalars, written as encoding/json writes it
// (WriteJSON's contract, held by TestWriteJSONMatchesEncodingJSON).

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// manifest encodes a manifest; its maps that were already encoded at the
// same depth for the same result are copied.
func (e *encoder) manifest(m map[string]any, d int) error {
	return e.valueShared(m, d, 0)
}

// valueShared is value, reusing earlier encodings of the maps of the top
// levels of a manifest (below them maps are small and rarely shared).
func (e *encoder) valueShared(v any, d, level int) error {
	x, ok := v.(map[string]any)
	if !ok || x == nil || level > 2 {
		return e.value(v, d)
	}
	key := sharedKey{reflect.ValueOf(x).UnsafePointer(), d}
	if at, ok := e.shared[key]; ok {
		e.buf = append(e.buf, e.buf[at[0]:at[1]]...)
		return nil
	}
	start := len(e.buf)
	e.buf = append(e.buf, '{')
	lo, hi := pushKeys(e, x)
	for i := lo; i < hi; i++ {
		k := e.keys[i]
		e.field(i-lo, d, k)
		if err := e.valueShared(x[k], d+1, level+1); err != nil {
			return err
		}
	}
	e.popKeys(lo)
	e.end(len(x), d, '}')
	if e.shared == nil {
		e.shared = make(map[sharedKey][2]int)
	}
	e.shared[key] = [2]int{start, len(e.buf)}
	return nil
}

// value encodes a JSON-shaped value (what render returns); anything else
// goes through encoding/json.
func (e *encoder) value(v any, d int) error {
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case string:
		e.buf = appendString(e.buf, x)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case int32:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return e.fallback(v, d)
		}
		e.buf = appendFloat(e.buf, x)
	case map[string]any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		e.buf = append(e.buf, '{')
		lo, hi := pushKeys(e, x)
		for i := lo; i < hi; i++ {
			k := e.keys[i]
			e.field(i-lo, d, k)
			if err := e.value(x[k], d+1); err != nil {
				return err
			}
		}
		e.popKeys(lo)
		e.end(len(x), d, '}')
	case []any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		e.buf = append(e.buf, '[')
		for i, el := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.newline(d + 1)
			if err := e.value(el, d+1); err != nil {
				return err
			}
		}
		e.end(len(x), d, ']')
	default:
		return e.fallback(v, d)
	}
	return nil
}

// fallback marshals with encoding/json and indents as its Encoder would.
func (e *encoder) fallback(v any, d int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, strings.Repeat("  ", d), "  "); err != nil {
		return err
	}
	e.buf = append(e.buf, out.Bytes()...)
	return nil
}

// appendFloat formats as encoding/json does (ES6 number to string).
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hex = "0123456789abcdef"

// plain marks the ASCII bytes appendString copies as they are.
var plain = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// appendString quotes s as encoding/json does with HTML escaping on (its
// default): <, >, & and control characters as \u00XX (\b \f \n \r \t
// short), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if plain[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
