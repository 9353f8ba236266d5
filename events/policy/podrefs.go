package policy

import "sort"

// PodReference is an object a pod spec names: a ConfigMap, Secret,
// PersistentVolumeClaim or ServiceAccount, in the pod's namespace.
type PodReference struct {
	Kind, Name string
}

// PodReferences lists what a pod spec references (Karmada's
// propagateDeps and the kube.getPodDependencies Lua helper): ConfigMaps
// and Secrets of volumes, projected sources, env and envFrom, image pull
// Secrets, PersistentVolumeClaims, and the ServiceAccount unless it is
// "default"; sorted by kind, then name, each once.
func PodReferences(podSpec map[string]any) []PodReference {
	if podSpec == nil {
		return nil
	}
	seen := map[PodReference]bool{}
	add := func(k, name string) {
		if name != "" {
			seen[PodReference{Kind: k, Name: name}] = true
		}
	}
	if sa := str(podSpec, "serviceAccountName"); sa != "" && sa != "default" {
		add("ServiceAccount", sa)
	}
	for _, s := range objects(podSpec["imagePullSecrets"]) {
		add("Secret", str(s, "name"))
	}
	for _, v := range objects(podSpec["volumes"]) {
		add("ConfigMap", str(v, "configMap", "name"))
		add("Secret", str(v, "secret", "secretName"))
		add("PersistentVolumeClaim", str(v, "persistentVolumeClaim", "claimName"))
		if proj, ok := v["projected"].(map[string]any); ok {
			for _, src := range objects(proj["sources"]) {
				add("ConfigMap", str(src, "configMap", "name"))
				add("Secret", str(src, "secret", "name"))
			}
		}
	}
	for _, field := range []string{"containers", "initContainers"} {
		for _, c := range objects(podSpec[field]) {
			for _, ef := range objects(c["envFrom"]) {
				add("ConfigMap", str(ef, "configMapRef", "name"))
				add("Secret", str(ef, "secretRef", "name"))
			}
			for _, env := range objects(c["env"]) {
				add("ConfigMap", str(env, "valueFrom", "configMapKeyRef", "name"))
				add("Secret", str(env, "valueFrom", "secretKeyRef", "name"))
			}
		}
	}
	out := make([]PodReference, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// str reads the string at path in m ("" when absent).
func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, _ := cur.(map[string]any)
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}

// objects returns the objects of a list value.
func objects(v any) []map[string]any {
	items, _ := v.([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
