package policyd

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// template is an accepted resource template.
type template struct {
	Record events.ObjectRecord
	// Object is the decoded template; nil once compacted (policyd's own
	// state keeps only what binding needs, below: 10,000 decoded objects
	// were most of its heap, all of it for the collector to walk).
	Object map[string]any
	UID    string

	compacted bool
	labels    map[string]string
	replicas  int32
	requests  corev1.ResourceList
	deps      []events.ObjectKey
}

// compact keeps what facts, BuildBinding and dependencies read and drops
// the decoded object.
func (t *template) compact() {
	if t.compacted {
		return
	}
	t.labels = t.objectLabels()
	t.replicas, t.requests = WorkloadReplicas(t.Record.Key.Kind, t.Object)
	t.deps = Dependencies(t.Record.Key.Kind, t.Record.Key.Namespace, t.Object)
	t.Object, t.compacted = nil, true
}

// workload is the template's desired replicas and one replica's requests.
func (t *template) workload() (int32, corev1.ResourceList) {
	if t.compacted {
		return t.replicas, t.requests
	}
	return WorkloadReplicas(t.Record.Key.Kind, t.Object)
}

// dependencies are the keys of the templates a workload references.
func (t *template) dependencies() []events.ObjectKey {
	if t.compacted {
		return t.deps
	}
	return Dependencies(t.Record.Key.Kind, t.Record.Key.Namespace, t.Object)
}

func (t *template) facts() policy.ResourceFacts {
	lbls := t.labels
	if !t.compacted {
		lbls = t.objectLabels()
	}
	return policy.ResourceFacts{APIVersion: t.Record.APIVersion, Kind: t.Record.Key.Kind, Namespace: t.Record.Key.Namespace, Name: t.Record.Key.Name, Labels: lbls}
}

func (t *template) objectLabels() map[string]string {
	md, _ := t.Object["metadata"].(map[string]any)
	lbls := map[string]string{}
	if l, ok := md["labels"].(map[string]any); ok {
		for k, v := range l {
			if s, ok := v.(string); ok {
				lbls[k] = s
			}
		}
	}
	return lbls
}

// overridePolicy is an accepted OverridePolicy or ClusterOverridePolicy.
type overridePolicy struct {
	Key    events.ObjectKey
	Policy policy.OverridePolicy
}

// OrderOverrides returns the override policies that apply to r, in the order
// Karmada applies them (reference §5.1): every matching ClusterOverridePolicy
// first, then the matching OverridePolicies of r's namespace; within each
// group ascending implicit priority, then name. Later ones win conflicts.
func OrderOverrides(r policy.ResourceFacts, all []overridePolicy) []policy.OverridePolicy {
	type ranked struct {
		p    policy.OverridePolicy
		prio policy.SelectorPriority
	}
	var cluster, namespaced []ranked
	for _, o := range all {
		prio := policy.PriorityMatchAll
		if len(o.Policy.Spec.ResourceSelectors) > 0 {
			prio = policy.SelectorsPriority(o.Policy.Spec.ResourceSelectors, r)
		}
		if prio == policy.PriorityMisMatch {
			continue
		}
		switch {
		case o.Key.Kind == policy.KindClusterOverridePolicy:
			cluster = append(cluster, ranked{o.Policy, prio})
		case r.Namespace != "" && o.Key.Namespace == r.Namespace:
			namespaced = append(namespaced, ranked{o.Policy, prio})
		}
	}
	var out []policy.OverridePolicy
	for _, g := range [][]ranked{cluster, namespaced} {
		sort.SliceStable(g, func(i, j int) bool {
			if g[i].prio != g[j].prio {
				return g[i].prio < g[j].prio
			}
			return g[i].p.Name < g[j].p.Name
		})
		for _, r := range g {
			out = append(out, r.p)
		}
	}
	return out
}

// dividedKinds are the kinds whose replicas Karmada divides, and where.
var dividedKinds = map[string]string{"Deployment": "replicas", "StatefulSet": "replicas", "ReplicaSet": "replicas", "Job": "parallelism"}

// WorkloadReplicas reads the desired replicas and one replica's resource
// requests from a template (0 and nil for kinds that are not workloads).
func WorkloadReplicas(kind string, obj map[string]any) (int32, corev1.ResourceList) {
	field, ok := dividedKinds[kind]
	if !ok {
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

// BuildBinding joins a template with its claimed policy and overrides. The
// revision is left to the caller (it counts changes).
func BuildBinding(t *template, claimed *candidatePolicy, overrides []policy.OverridePolicy) events.Binding {
	replicas, req := t.workload()
	b := events.Binding{
		Key: t.Record.Key, APIVersion: t.Record.APIVersion, UID: t.UID, Generation: t.Record.Generation,
		Template: t.Record.Object, Replicas: replicas, ReplicaRequirements: req, Overrides: overrides,
		Warnings: t.Record.Warnings, AcceptedAt: t.Record.UpdatedAt,
	}
	if claimed != nil {
		spec := claimed.Policy.Spec
		b.Spec = &spec
		b.Policy = &events.PolicyRef{Kind: claimed.Key.Kind, Namespace: claimed.Key.Namespace, Name: claimed.Key.Name}
	}
	return b
}

// sameBinding reports whether two bindings would schedule and apply alike
// (everything but the revision).
func sameBinding(a, b events.Binding) bool {
	a.Revision, b.Revision = 0, 0
	a.RescheduleRequestedAt, b.RescheduleRequestedAt = nil, nil
	ja, _ := events.MarshalJSON(a)
	jb, _ := events.MarshalJSON(b)
	return string(ja) == string(jb)
}

// Template is a resource template as BuildBinding reads it; OverrideCandidate
// is an override policy as OrderOverrides takes it. Both are exported so
// that `flotilla simulate` builds bindings with exactly policyd's code.
type (
	Template          = template
	OverrideCandidate = overridePolicy
)

// NewTemplate returns the template policyd holds for an accepted record
// whose object decodes to obj: its uid is metadata.uid, or, when that is
// absent, the deterministic uid policyd derives from the key.
func NewTemplate(rec events.ObjectRecord, obj map[string]any) *Template {
	uid := ""
	if md, ok := obj["metadata"].(map[string]any); ok {
		uid, _ = md["uid"].(string)
	}
	if uid == "" {
		uid = TemplateUID(rec.Key)
	}
	return &template{Record: rec, Object: obj, UID: uid}
}

// TemplateUID is the uid policyd gives a template without metadata.uid (it
// breaks Webster ties in the scheduler).
func TemplateUID(key events.ObjectKey) string {
	return events.DeterministicID("template-uid", key.String())
}

// Facts returns what resource selectors look at: apiVersion, kind,
// namespace, name and labels.
func (t *template) Facts() policy.ResourceFacts { return t.facts() }
