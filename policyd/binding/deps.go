package binding

import (
	"sort"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
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
	refs := policy.PodReferences(podSpecOf(kind, obj))
	if refs == nil {
		return nil
	}
	out := make([]events.ObjectKey, 0, len(refs))
	for _, r := range refs {
		out = append(out, events.ObjectKey{Kind: r.Kind, Namespace: namespace, Name: r.Name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
