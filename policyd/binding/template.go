package binding

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Template is an accepted resource template as a binding is built from it.
type Template struct {
	Record events.ObjectRecord
	// Object is the decoded template; nil once compacted (policyd's own
	// state keeps only what a binding needs, below: 10,000 decoded objects
	// were most of its heap, all of it for the collector to walk).
	Object map[string]any
	UID    string

	compacted bool
	labels    map[string]string
	replicas  int32
	requests  corev1.ResourceList
	deps      []events.ObjectKey
}

// NewTemplate returns the template for an accepted record whose object
// decodes to obj: its uid is metadata.uid, or, when that is absent,
// TemplateUID of its key.
func NewTemplate(rec events.ObjectRecord, obj map[string]any) *Template {
	uid := ""
	if md, ok := obj["metadata"].(map[string]any); ok {
		uid, _ = md["uid"].(string)
	}
	if uid == "" {
		uid = TemplateUID(rec.Key)
	}
	return &Template{Record: rec, Object: obj, UID: uid}
}

// TemplateUID is the uid of a template without metadata.uid (it breaks
// Webster ties in the scheduler).
func TemplateUID(key events.ObjectKey) string {
	return events.DeterministicID("template-uid", key.String())
}

// Compact keeps what Facts, Workload, Dependencies and Build read and drops
// the decoded object; they answer as before.
func (t *Template) Compact() {
	if t.compacted {
		return
	}
	t.labels = policy.ResourceFactsOf(t.Object).Labels
	t.replicas, t.requests = workloadReplicas(t.Record.APIVersion, t.Record.Key.Kind, t.Object)
	t.deps = dependencies(t.Record.Key.Kind, t.Record.Key.Namespace, t.Object)
	t.Object, t.compacted = nil, true
}

// Workload returns the template's desired replicas and one replica's
// requests (0 and nil for a kind whose replicas Karmada does not divide).
func (t *Template) Workload() (int32, corev1.ResourceList) {
	if t.compacted {
		return t.replicas, t.requests
	}
	return workloadReplicas(t.Record.APIVersion, t.Record.Key.Kind, t.Object)
}

// Dependencies returns the keys of the templates a workload references
// (Karmada's propagateDeps), sorted.
func (t *Template) Dependencies() []events.ObjectKey {
	if t.compacted {
		return t.deps
	}
	return dependencies(t.Record.Key.Kind, t.Record.Key.Namespace, t.Object)
}

// Facts returns what resource selectors look at: apiVersion, kind,
// namespace, name and labels.
func (t *Template) Facts() policy.ResourceFacts {
	lbls := t.labels
	if !t.compacted {
		lbls = policy.ResourceFactsOf(t.Object).Labels
	}
	return policy.ResourceFacts{APIVersion: t.Record.APIVersion, Kind: t.Record.Key.Kind, Namespace: t.Record.Key.Namespace, Name: t.Record.Key.Name, Labels: lbls}
}

// workloadReplicas reads the desired replicas (from policy.ReplicaField,
// 1 when the field is absent) and one replica's resource requests from a
// template; 0 and nil for kinds whose replicas are not divided.
func workloadReplicas(apiVersion, kind string, obj map[string]any) (int32, corev1.ResourceList) {
	field := policy.ReplicaField(apiVersion, kind)
	if field == "" {
		return 0, nil
	}
	spec, _ := obj["spec"].(map[string]any)
	replicas := int32(1)
	if v, ok := spec[field]; ok {
		switch n := v.(type) {
		case float64:
			replicas = int32(n)
		case int64:
			replicas = int32(n)
		case int:
			replicas = int32(n)
		}
	}
	return replicas, podRequests(spec)
}

// podRequests sums the requests (or, for a container without requests,
// the limits) of the pod template's containers; nil when there are none.
func podRequests(spec map[string]any) corev1.ResourceList {
	tpl, _ := spec["template"].(map[string]any)
	podSpec, _ := tpl["spec"].(map[string]any)
	containers, _ := podSpec["containers"].([]any)
	sum := corev1.ResourceList{}
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		res, _ := cm["resources"].(map[string]any)
		req, _ := res["requests"].(map[string]any)
		if req == nil {
			req, _ = res["limits"].(map[string]any)
		}
		for name, v := range req {
			q, err := resource.ParseQuantity(toString(v))
			if err != nil {
				continue
			}
			cur := sum[corev1.ResourceName(name)]
			cur.Add(q)
			sum[corev1.ResourceName(name)] = cur
		}
	}
	if len(sum) == 0 {
		return nil
	}
	return sum
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	default:
		b, _ := events.MarshalJSON(x)
		return string(b)
	}
}
