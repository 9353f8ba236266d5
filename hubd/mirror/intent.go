package mirror

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// Managers whose fields intent leaves out: kubectl's client-side apply
// (its fields are the last-applied record, read whole instead) and hubd
// itself (it writes only status).
const (
	clientSideApply = "kubectl-client-side-apply"
	// FieldManager owns what hubd writes on the hub (server-side apply).
	FieldManager = "flotilla-hubd"
)

// intent is what the users of a hub object wrote, without what the API
// server defaulted: the API server stores a Deployment with a strategy,
// a revisionHistoryLimit and a dnsPolicy the file never had, and
// publishing those would make what hubd publishes differ from what
// `flotilla apply` publishes for the same file. kubectl's client-side
// apply keeps the file in the last-applied annotation: intent starts from
// it and lays over it the fields every other writer owns (managedFields:
// `kubectl scale` owns spec.replicas, `kubectl label` a label). Without
// the annotation it is the union of every writer's fields: exact for
// server-side apply (Flux, kubectl apply --server-side), the defaulted
// fields included for writers that update (Helm), as the API server does
// not tell them apart. Without managedFields it is obj.
func intent(obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	var base map[string]any
	if ann, ok := md["annotations"].(map[string]any); ok {
		if la, ok := ann[lastApplied].(string); ok && json.Unmarshal([]byte(la), &base) != nil {
			base = nil
		}
	}
	if base == nil && len(entries) == 0 {
		return obj
	}
	fromAnnotation := base != nil
	if base == nil {
		base = map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
	}
	for _, e := range entries {
		m, _ := e.(map[string]any)
		manager, _ := m["manager"].(string)
		sub, _ := m["subresource"].(string)
		fields, _ := m["fieldsV1"].(map[string]any)
		if sub == "status" || manager == FieldManager || (fromAnnotation && manager == clientSideApply) || fields == nil {
			continue
		}
		base = overlay(base, obj, fields).(map[string]any)
	}
	// Identity comes from the object, as the bus keys it.
	bmd, _ := base["metadata"].(map[string]any)
	if bmd == nil {
		bmd = map[string]any{}
		base["metadata"] = bmd
	}
	for _, f := range []string{"name", "namespace"} {
		if v, ok := md[f]; ok {
			bmd[f] = v
		}
	}
	return base
}

// overlay sets in base the fields of live that node (a managedFields
// fieldsV1 set) names, and returns base: "f:NAME" a field, "k:{...}" the
// list item whose fields have those values, "v:VALUE" a set item, "i:N" an
// index; "." the node's own existence. A node naming no children owns its
// value whole.
func overlay(base, live any, node map[string]any) any {
	if !hasChildren(node) {
		return copyValue(live)
	}
	switch l := live.(type) {
	case map[string]any:
		b, _ := base.(map[string]any)
		if b == nil {
			b = map[string]any{}
		}
		for key, child := range node {
			name, ok := strings.CutPrefix(key, "f:")
			if !ok {
				continue
			}
			if v, ok := l[name]; ok {
				c, _ := child.(map[string]any)
				b[name] = overlay(b[name], v, c)
			}
		}
		return b
	case []any:
		b, _ := base.([]any)
		for key, child := range node {
			c, _ := child.(map[string]any)
			i := itemIndex(l, key)
			if i < 0 {
				continue
			}
			j := itemIndex(b, key)
			if j < 0 {
				b = append(b, overlay(nil, l[i], c))
				continue
			}
			b[j] = overlay(b[j], l[i], c)
		}
		return b
	}
	return copyValue(live)
}

// hasChildren reports whether node names anything but itself.
func hasChildren(node map[string]any) bool {
	for k := range node {
		if k != "." {
			return true
		}
	}
	return false
}

// itemIndex finds the item of list a fieldsV1 list key names; -1 if none.
func itemIndex(list []any, key string) int {
	switch {
	case strings.HasPrefix(key, "k:"):
		var want map[string]any
		if json.Unmarshal([]byte(key[2:]), &want) != nil {
			return -1
		}
		for i, it := range list {
			m, _ := it.(map[string]any)
			if m != nil && matches(m, want) {
				return i
			}
		}
	case strings.HasPrefix(key, "v:"):
		var want any
		if json.Unmarshal([]byte(key[2:]), &want) != nil {
			return -1
		}
		for i, it := range list {
			if sameValue(it, want) {
				return i
			}
		}
	case strings.HasPrefix(key, "i:"):
		if n, err := strconv.Atoi(key[2:]); err == nil && n >= 0 && n < len(list) {
			return n
		}
	}
	return -1
}

func matches(item, want map[string]any) bool {
	for k, v := range want {
		if !sameValue(item[k], v) {
			return false
		}
	}
	return true
}

// sameValue compares JSON values, numbers by value (an unstructured
// object holds int64 where encoding/json gives float64).
func sameValue(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}
