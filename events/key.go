package events

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
)

// ObjectKey names a Kubernetes object the way Flotilla addresses it everywhere:
// API group, kind, namespace ("" for cluster-scoped objects) and name.
type ObjectKey struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// KeyOf returns the key of the object a manifest with apiVersion, kind,
// namespace and name describes: the group is apiVersion up to its last
// "/" ("" for the core group).
func KeyOf(apiVersion, kind, namespace, name string) ObjectKey {
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i > 0 {
		group = apiVersion[:i]
	}
	return ObjectKey{Group: group, Kind: kind, Namespace: namespace, Name: name}
}

// String renders the key as "<namespace>/<Kind>/<name>" (namespace "_" for
// cluster-scoped objects); it is the CloudEvent subject of events about it.
func (k ObjectKey) String() string {
	ns := k.Namespace
	if ns == "" {
		ns = "_"
	}
	kind := k.Kind
	if k.Group != "" {
		kind = k.Kind + "." + k.Group
	}
	return ns + "/" + kind + "/" + k.Name
}

// SortedByKey returns the values of m in the order of their keys'
// String: the order in which policyd, and simulate after it, consider
// policies, so that equal candidates are taken alike.
func SortedByKey[V any](m map[ObjectKey]V) []V {
	keys := make([]ObjectKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	out := make([]V, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// Ref renders the key the way kubectl users write it: "kind/name -n ns".
func (k ObjectKey) Ref() string {
	s := strings.ToLower(k.Kind) + "/" + k.Name
	if k.Namespace != "" {
		s += " -n " + k.Namespace
	}
	return s
}

// subjectTokens renders the key as four NATS subject tokens:
// <namespace>.<group>.<Kind>.<name>, each written by token, with "_" for
// an empty namespace and "core" for the core group. The mapping is
// injective over all keys (DESIGN.md §2), so two objects never share a
// subject; ParseSubjectKey inverts it.
func (k ObjectKey) subjectTokens() string {
	return token(k.Namespace) + "." + groupToken(k.Group) + "." + token(k.Kind) + "." + token(k.Name)
}

// ParseSubjectKey is the inverse of the key part of a subject: it reads the
// last four tokens of a NATS subject back into an ObjectKey. A token with a
// malformed escape is an error.
func ParseSubjectKey(subject string) (ObjectKey, error) {
	parts := strings.Split(subject, ".")
	if len(parts) < 4 {
		return ObjectKey{}, fmt.Errorf("subject %q has no object key", subject)
	}
	p := parts[len(parts)-4:]
	var k ObjectKey
	var errs [4]error
	k.Namespace, errs[0] = untoken(p[0])
	k.Group, errs[1] = untoken(p[1])
	k.Kind, errs[2] = untoken(p[2])
	k.Name, errs[3] = untoken(p[3])
	if p[1] == "core" {
		k.Group = ""
	}
	for _, err := range errs {
		if err != nil {
			return ObjectKey{}, fmt.Errorf("subject %q: %w", subject, err)
		}
	}
	return k, nil
}

// token writes s as one NATS subject token, injectively:
//
//   - "" is "_" (a cluster-scoped object's namespace);
//   - "." is "_", as it always was, so that every name without "_" (every
//     DNS-1123 name, the names of most kinds) keeps the token it had in
//     streams recorded before escaping existed;
//   - "_" and "%" themselves, and every byte that cannot stand in a token
//     or is not printable ASCII (space and other whitespace, "*", ">",
//     control bytes, UTF-8), are "%XX" (upper-case hex); a name that is "."
//     alone is "%2E" so that it differs from "";
//   - every other byte is itself.
//
// "_" and "%" never stand for themselves, so untoken can read every token
// back; tokens never contain ".", whitespace or a lone wildcard.
func token(s string) string {
	switch s {
	case "":
		return "_"
	case ".":
		return "%2E"
	}
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = literal(s[i])
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			b.WriteByte('_')
		case literal(c):
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

const hexDigits = "0123456789ABCDEF"

// literal reports whether byte c stands for itself in a token.
func literal(c byte) bool {
	return c > ' ' && c < 0x7f && c != '.' && c != '_' && c != '%' && c != '*' && c != '>'
}

// groupToken is token for an API group: "core" stands for the core group
// (""), so a group literally named "core" has its first letter escaped.
func groupToken(g string) string {
	switch g {
	case "":
		return "core"
	case "core":
		return "%63ore"
	}
	return token(g)
}

// untoken reads a token back (the inverse of token).
func untoken(t string) (string, error) {
	if t == "_" {
		return "", nil
	}
	if !strings.ContainsAny(t, "_%") {
		return t, nil
	}
	b := make([]byte, 0, len(t))
	for i := 0; i < len(t); i++ {
		switch c := t[i]; c {
		case '_':
			b = append(b, '.')
		case '%':
			if i+2 >= len(t) {
				return "", fmt.Errorf("token %q: truncated escape", t)
			}
			hi, lo := unhex(t[i+1]), unhex(t[i+2])
			if hi < 0 || lo < 0 {
				return "", fmt.Errorf("token %q: bad escape %q", t, t[i:i+3])
			}
			b = append(b, byte(hi<<4|lo))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b), nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// ClusterToken renders a cluster name as one subject token.
func ClusterToken(name string) string { return token(name) }

// Partition is the partition of n (DESIGN.md §7, decision 23) that k's
// work belongs to: FNV-1a of the key's subject tokens, modulo n. Every
// instance computes the same partition for a key, whatever its version.
func Partition(k ObjectKey, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(k.subjectTokens()))
	return int(h.Sum32() % uint32(n))
}

// PartitionItem names partition p as a lease's work item: p<N>.
func PartitionItem(p int) string { return "p" + strconv.Itoa(p) }
