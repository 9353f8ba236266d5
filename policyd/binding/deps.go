package binding

import (
	"sort"

	"github.com/flotilla-io/flotilla/events"
)

// podSpecOf finds the pod spec inside a workload template.
func podSpecOf(kind string, obj map[string]any) map[string]any {
	spec, _ := obj["spec"].(map[string]any)
	switch kind {
	case "Pod":
		return spec
	case "CronJob":
		jt, _ := spec["jobTemplate"].(map[string]any)
		js, _ := jt["spec"].(map[string]any)
		spec = js
	}
	tpl, _ := spec["template"].(map[string]any)
	ps, _ := tpl["spec"].(map[string]any)
	return ps
}

// dependencies lists the ConfigMaps, Secrets, PersistentVolumeClaims and
// ServiceAccount a workload's pod template references (Karmada's
// propagateDeps), in the workload's namespace, sorted.
func dependencies(kind, namespace string, obj map[string]any) []events.ObjectKey {
	ps := podSpecOf(kind, obj)
	if ps == nil {
		return nil
	}
	seen := map[events.ObjectKey]bool{}
	add := func(k, name string) {
		if name != "" {
			seen[events.ObjectKey{Kind: k, Namespace: namespace, Name: name}] = true
		}
	}
	str := func(m map[string]any, path ...string) string {
		var cur any = m
		for _, p := range path {
			mm, _ := cur.(map[string]any)
			cur = mm[p]
		}
		s, _ := cur.(string)
		return s
	}
	if sa := str(ps, "serviceAccountName"); sa != "" && sa != "default" {
		add("ServiceAccount", sa)
	}
	for _, s := range list(ps["imagePullSecrets"]) {
		add("Secret", str(s, "name"))
	}
	for _, v := range list(ps["volumes"]) {
		add("ConfigMap", str(v, "configMap", "name"))
		add("Secret", str(v, "secret", "secretName"))
		add("PersistentVolumeClaim", str(v, "persistentVolumeClaim", "claimName"))
		if proj, ok := v["projected"].(map[string]any); ok {
			for _, src := range list(proj["sources"]) {
				add("ConfigMap", str(src, "configMap", "name"))
				add("Secret", str(src, "secret", "name"))
			}
		}
	}
	for _, field := range []string{"containers", "initContainers"} {
		for _, c := range list(ps[field]) {
			for _, ef := range list(c["envFrom"]) {
				add("ConfigMap", str(ef, "configMapRef", "name"))
				add("Secret", str(ef, "secretRef", "name"))
			}
			for _, env := range list(c["env"]) {
				add("ConfigMap", str(env, "valueFrom", "configMapKeyRef", "name"))
				add("Secret", str(env, "valueFrom", "secretKeyRef", "name"))
			}
		}
	}
	out := make([]events.ObjectKey, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func list(v any) []map[string]any {
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
