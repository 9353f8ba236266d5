package events

import (
	"fmt"
	"sort"
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
// <namespace>.<group>.<Kind>.<name>, with "_" for an empty namespace, "core"
// for the core group, and dots inside a token replaced by "_" (Kubernetes
// names never contain "_", so the mapping is reversible).
func (k ObjectKey) subjectTokens() string {
	ns := k.Namespace
	if ns == "" {
		ns = "_"
	}
	g := k.Group
	if g == "" {
		g = "core"
	}
	return token(ns) + "." + token(g) + "." + token(k.Kind) + "." + token(k.Name)
}

// ParseSubjectKey is the inverse of the key part of a subject: it reads the
// last four tokens of a NATS subject back into an ObjectKey.
func ParseSubjectKey(subject string) (ObjectKey, error) {
	parts := strings.Split(subject, ".")
	if len(parts) < 4 {
		return ObjectKey{}, fmt.Errorf("subject %q has no object key", subject)
	}
	p := parts[len(parts)-4:]
	k := ObjectKey{Namespace: untoken(p[0]), Group: untoken(p[1]), Kind: untoken(p[2]), Name: untoken(p[3])}
	if p[0] == "_" {
		k.Namespace = ""
	}
	if p[1] == "core" {
		k.Group = ""
	}
	return k, nil
}

func token(s string) string {
	if s == "" {
		return "_"
	}
	if !strings.ContainsAny(s, ". *>") {
		return s
	}
	return tokenReplacer.Replace(s)
}

// tokenReplacer maps what cannot stand in a subject token to "_".
var tokenReplacer = strings.NewReplacer(".", "_", " ", "_", "*", "_", ">", "_")

func untoken(s string) string { return strings.ReplaceAll(s, "_", ".") }

// ClusterToken renders a cluster name as one subject token.
func ClusterToken(name string) string { return token(name) }
