package readmodel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flotilla-io/flotilla/events"
)

// ErrNotFound: Resolve found no object the reference names.
var ErrNotFound = errors.New("not found")

// AmbiguousError: a reference names several objects (a bare NAME that
// several kinds share, or a kind word that several groups define), as
// kubectl refuses an ambiguous short name.
type AmbiguousError struct {
	Ref string
	// Noun names the candidates ("templates", "objects").
	Noun string
	// Candidates, as KIND/NAME the user can type instead.
	Candidates []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s names %d %s: say which, e.g. %s", e.Ref, len(e.Candidates), e.Noun, strings.Join(e.Candidates, " or "))
}

// SplitRef splits KIND/NAME; a reference without both is an error that
// says what to write.
func SplitRef(ref string) (kind, name string, err error) {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok || name == "" {
		return "", "", fmt.Errorf("%q: want KIND/NAME, e.g. deployment/my-app", ref)
	}
	return kind, name, nil
}

// Resolve returns the one item among items whose key (keyOf) ref names,
// the kubectl way: ref is KIND/NAME (KIND as kubectl takes it: kind, plural
// or short name, case-insensitive, optionally with .GROUP; see MatchesKind)
// or a bare NAME of any kind. A namespaced key must be in namespace; a
// cluster-scoped one matches from any namespace. No match is ErrNotFound;
// several are an *AmbiguousError listing them in the order of items (noun
// names them).
func Resolve[T any](ref, namespace string, items []T, keyOf func(T) events.ObjectKey, noun string) (T, error) {
	kind, name, hasKind := strings.Cut(ref, "/")
	if !hasKind {
		kind, name = "", ref
	}
	var found []T
	var keys []events.ObjectKey
	for _, it := range items {
		if k := keyOf(it); k.Name == name && (k.Namespace == namespace || k.Namespace == "") && (!hasKind || MatchesKind(kind, k)) {
			found, keys = append(found, it), append(keys, k)
		}
	}
	var zero T
	switch len(found) {
	case 0:
		return zero, ErrNotFound
	case 1:
		return found[0], nil
	}
	return zero, &AmbiguousError{Ref: ref, Noun: noun, Candidates: candidates(keys)}
}

// candidates names each key as kind/name, with .group where two share a kind.
func candidates(keys []events.ObjectKey) []string {
	kinds := map[string]int{}
	for _, k := range keys {
		kinds[k.Kind]++
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		word := strings.ToLower(k.Kind)
		if kinds[k.Kind] > 1 && k.Group != "" {
			word += "." + k.Group
		}
		out = append(out, word+"/"+k.Name)
	}
	return out
}

// MatchesKind reports whether arg, a kind as kubectl takes it (deployments,
// deploy, Deployment, deployments.apps, services.core), names key's kind,
// and its group when one is given ("core" is the group "").
func MatchesKind(arg string, key events.ObjectKey) bool {
	kind, group, grouped := strings.Cut(arg, ".")
	if !kindWordMatches(kind, key.Kind) {
		return false
	}
	return !grouped || strings.EqualFold(group, key.Group) || (key.Group == "" && strings.EqualFold(group, "core"))
}

var shortNames = map[string]string{"pp": "propagationpolicy", "cpp": "clusterpropagationpolicy", "op": "overridepolicy", "cop": "clusteroverridepolicy",
	"deploy": "deployment", "svc": "service", "cm": "configmap", "sts": "statefulset", "ds": "daemonset", "ns": "namespace", "pvc": "persistentvolumeclaim", "sa": "serviceaccount",
	"po": "pod", "rs": "replicaset", "ing": "ingress", "hpa": "horizontalpodautoscaler", "cj": "cronjob", "pv": "persistentvolume", "sc": "storageclass",
	"netpol": "networkpolicy", "pdb": "poddisruptionbudget", "ep": "endpoints", "limits": "limitrange", "quota": "resourcequota", "pc": "priorityclass",
	"crd": "customresourcedefinition", "crds": "customresourcedefinition"}

// kindWordMatches reports whether word (no group) is kind, its plural or
// its short name, case-insensitive.
func kindWordMatches(word, kind string) bool {
	a, k := strings.ToLower(word), strings.ToLower(kind)
	if s, ok := shortNames[a]; ok {
		a = s
	}
	return a == k || a == k+"s" || a == k+"es" || (strings.HasSuffix(k, "y") && a == k[:len(k)-1]+"ies")
}
