package validation

import (
	"cmp"
	"strings"

	"github.com/flotilla-io/flotilla/events"
)

// CustomScopes maps the kinds CustomResourceDefinitions define
// ("group/Kind", as ScopeKey gives) to whether they are namespaced.
type CustomScopes map[string]bool

// ScopeKey is the key of a kind in CustomScopes.
func ScopeKey(apiVersion, kind string) string {
	return events.KeyOf(apiVersion, kind, "", "").Group + "/" + kind
}

// Add records the scope of the kind obj defines, when obj is a
// CustomResourceDefinition (apiVersion and kind its own).
func (s CustomScopes) Add(apiVersion, kind string, obj map[string]any) {
	if group, k, ok := DefinedKind(apiVersion, kind, obj); ok {
		spec, _ := obj["spec"].(map[string]any)
		scope, _ := spec["scope"].(string)
		s[group+"/"+k] = scope != "Cluster" // Namespaced is the default scope
	}
}

// DefinedKind is the group and kind obj defines, when obj is a
// CustomResourceDefinition (apiVersion and kind its own) naming both.
func DefinedKind(apiVersion, kind string, obj map[string]any) (group, definedKind string, ok bool) {
	if !strings.HasPrefix(apiVersion, "apiextensions.k8s.io/") || kind != "CustomResourceDefinition" {
		return "", "", false
	}
	spec, _ := obj["spec"].(map[string]any)
	group, _ = spec["group"].(string)
	names, _ := spec["names"].(map[string]any)
	definedKind, _ = names["kind"].(string)
	return group, definedKind, group != "" && definedKind != ""
}

// AcceptedScopes are the scopes the accepted CustomResourceDefinitions
// among records define.
func AcceptedScopes(records map[events.ObjectKey]events.ObjectRecord) CustomScopes {
	s := CustomScopes{}
	for k, r := range records {
		if k.Kind != "CustomResourceDefinition" {
			continue
		}
		var obj map[string]any
		if events.UnmarshalJSON(r.Object, &obj) == nil {
			s.Add(r.APIVersion, k.Kind, obj)
		}
	}
	return s
}

// DefaultNamespaces gives a custom resource of a namespaced kind (scopes)
// that names no namespace the namespace namespace ("": default), as the
// built-in kinds get theirs in validation: kubectl sends a namespaced
// resource to the current namespace. Without it a Widget without
// metadata.namespace was taken for cluster-scoped and failed in every
// member. It marks each custom resource of a known kind Namespaced or not.
func DefaultNamespaces(docs []Document, scopes CustomScopes, namespace string) {
	for i := range docs {
		d := &docs[i]
		namespaced, known := scopes[ScopeKey(d.APIVersion, d.Kind)]
		if !known || d.Namespaced {
			continue
		}
		d.Namespaced = namespaced
		if !namespaced || d.Namespace != "" {
			continue
		}
		d.Namespace, d.NamespaceDefaulted = cmp.Or(namespace, "default"), true
		if md, ok := d.Object["metadata"].(map[string]any); ok {
			md["namespace"] = d.Namespace
		}
	}
}
