package readmodel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// The objects `get -o json|yaml|name|jsonpath` prints: each view as the
// Kubernetes object a Karmada user knows, so that what `get -o yaml` prints
// `apply -f -` and `simulate -f -` read back. Each is a plain JSON object
// (map[string]any), ready for unstructured.Unstructured.

// API versions of the objects Flotilla prints for its own views.
const (
	ClusterAPIVersion = "cluster.karmada.io/v1alpha1"
	WorkAPIVersion    = "work.karmada.io/v1alpha2"
	// FlotillaAPIVersion is the group of what Karmada has no object for
	// (dead letters).
	FlotillaAPIVersion = "flotilla.io/v1alpha1"
)

// ServerFields are the metadata fields the system sets, which `get -o
// yaml` prints and apply ignores (as the API server does): an object read
// back is the object applied.
var ServerFields = []string{"generation", "creationTimestamp", "resourceVersion", "uid", "managedFields", "selfLink"}

// Identity is an object reduced to its identity: the data of a request
// about it (a deletion, a reschedule), as the CLI and hubd publish it.
func Identity(apiVersion, kind, namespace, name string) map[string]any {
	md := map[string]any{"name": name}
	if namespace != "" {
		md["namespace"] = namespace
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": md}
}

// ObjectIdentity is the part of an object's JSON that names it: what a
// reader decodes when it needs only the key.
type ObjectIdentity struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// Key is the object's key.
func (o ObjectIdentity) Key() events.ObjectKey {
	return events.KeyOf(o.APIVersion, o.Kind, o.Metadata.Namespace, o.Metadata.Name)
}

// StripServerFields drops what the system sets and `get -o yaml` prints
// (ServerFields, and status, which the members report), as the API server
// ignores them on apply: what `get -o yaml` prints applies back unchanged.
// `flotilla apply` and hubd publish objects stripped so, which makes what
// either publishes for one file the same.
func StripServerFields(obj map[string]any) {
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		for _, f := range ServerFields {
			delete(md, f)
		}
	}
}

// Fleet is what every view is computed from, read once: the accepted
// objects, the latest placements, the joined work and the members.
type Fleet struct {
	Published Published
	Decisions []events.PlacementDecision
	Work      Work
	Clusters  []Cluster
}

// Template returns the placement and work of the template at key (a
// template never placed has a zero placement and no work).
func (f Fleet) Template(key events.ObjectKey) Template {
	p := events.PlacementDecision{Key: key}
	for _, d := range f.Decisions {
		if d.Key == key {
			p = d
		}
	}
	return templateOf(p, f.Work)
}

// decodeObject decodes a stored object; nil when there is none.
func decodeObject(raw json.RawMessage) map[string]any {
	var obj map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &obj) != nil || obj == nil {
		return map[string]any{}
	}
	return obj
}

// setMeta records the system's metadata on obj: its generation and its
// creation time.
func setMeta(obj map[string]any, generation int64, created time.Time) map[string]string {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	if generation > 0 {
		md["generation"] = generation
	}
	if !created.IsZero() {
		md["creationTimestamp"] = created.UTC().Format(time.RFC3339)
	}
	labels := map[string]string{}
	if l, ok := md["labels"].(map[string]any); ok {
		for k, v := range l {
			labels[k], _ = v.(string)
		}
	}
	return labels
}

// RecordObject is an accepted policy or template as `get -o yaml` prints
// it: the object as applied, with its generation and creation time, and,
// for a template, its status aggregated from every member (f.Template).
func (f Fleet) RecordObject(r events.ObjectRecord) map[string]any {
	obj := decodeObject(r.Object)
	if obj["apiVersion"] == nil {
		obj["apiVersion"] = r.APIVersion
	}
	if obj["kind"] == nil {
		obj["kind"] = r.Key.Kind
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{"name": r.Key.Name}
		if r.Key.Namespace != "" {
			md["namespace"] = r.Key.Namespace
		}
		obj["metadata"] = md
	}
	setMeta(obj, r.Generation, f.Published.Created(r.Key, r.UpdatedAt))
	if r.Role == events.RoleTemplate {
		if status := f.Template(r.Key).Status(); status != nil {
			obj["status"] = status
		}
	}
	return obj
}

// Status is the template's status aggregated from every member, as
// Karmada aggregates it onto the template: desired and ready replicas over
// the placed clusters (a kept evicted copy is neither; a lost cluster's
// last report is not counted ready), and one entry per member. A kind
// with a statusAggregation script has the status the script computes
// instead, as Karmada writes it. nil for a template never placed.
func (t Template) Status() map[string]any {
	if t.AggregatedStatus != nil {
		return t.AggregatedStatus
	}
	if t.Placement.DecidedAt.IsZero() && len(t.Work) == 0 {
		return nil
	}
	ready, desired := t.Totals()
	var clusters []any
	for _, s := range t.Work {
		phase, msg := t.Phase(s)
		c := map[string]any{"cluster": s.Cluster, "phase": phase, "replicas": t.Desired(s), "readyReplicas": s.ReadyReplicas}
		if msg != "" {
			c["message"] = msg
		}
		clusters = append(clusters, c)
	}
	status := map[string]any{"observedGeneration": t.Placement.Generation}
	if desired > 0 {
		status["replicas"], status["readyReplicas"] = desired, ready
	}
	if clusters != nil {
		status["clusters"] = clusters
	}
	return status
}

// Desired is what the placement wants of s's cluster: 0 for a cluster it
// no longer lists (a kept evicted copy, one being deleted).
func (t Template) Desired(s events.WorkStatus) int32 {
	for _, c := range t.Placement.Clusters {
		if c.Name == s.Cluster {
			if c.Replicas == 0 && s.Replicas > 0 {
				return s.Replicas // a non-divided kind: the member's own count
			}
			return c.Replicas
		}
	}
	return 0
}

// Totals are the ready and desired replicas over the clusters the
// placement lists. A kept evicted copy counts in neither (it is shown as
// Evicted), and a lost cluster's replicas are not counted ready: its last
// report is not current.
func (t Template) Totals() (ready, desired int32) {
	for _, s := range t.Work {
		want := t.Desired(s)
		if want == 0 && !t.placed(s.Cluster) {
			continue
		}
		desired += want
		if phase, _ := t.Phase(s); phase != WorkUnknown {
			ready += min(s.ReadyReplicas, want)
		}
	}
	return ready, desired
}

// ReadyOfAsked is Totals with the replicas the template asks for in place
// of those placed while a failed decision keeps fewer placed than that
// (a scale-up a FederatedResourceQuota refused keeps the previous
// clusters): READY then reads 2/4, as Karmada's READY (the template's
// spec.replicas) does, instead of a 2/2 that hides the refusal.
func (t Template) ReadyOfAsked() (ready, asked int32) {
	ready, placed := t.Totals()
	p := t.Placement
	if p.Scheduled || p.Binding == nil || p.Binding.Replicas == 0 {
		return ready, placed
	}
	asked = p.Binding.Replicas
	if p.Strategy == string(policy.StrategyDuplicated) {
		asked *= int32(len(p.Clusters))
	}
	return ready, max(placed, asked)
}

func (t Template) placed(cluster string) bool {
	for _, c := range t.Placement.Clusters {
		if c.Name == cluster {
			return true
		}
	}
	return false
}

// ClusterObject is a member as Karmada's cluster.karmada.io/v1alpha1
// Cluster, with the status simulate reads: conditions, kubernetesVersion,
// apiEnablements, nodeSummary and resourceSummary.
func ClusterObject(c Cluster) policy.Cluster {
	r := c.Registration
	out := policy.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: ClusterAPIVersion, Kind: "Cluster"},
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Labels: r.Labels, Annotations: r.Annotations, Generation: r.Generation, CreationTimestamp: metav1.NewTime(c.JoinedAt.UTC())},
		Spec:       r.Spec,
	}
	if h := c.Health; h != nil {
		for _, cond := range h.Conditions {
			out.Status.Conditions = append(out.Status.Conditions, metav1.Condition{Type: cond.Type, Status: metav1.ConditionStatus(cond.Status),
				Reason: orReason(cond.Reason), Message: cond.Message, LastTransitionTime: metav1.NewTime(cond.LastTransitionTime.UTC())})
		}
	}
	if cp := c.Capacity; cp != nil {
		out.Status.KubernetesVersion = cp.KubernetesVersion
		out.Status.APIEnablements = cp.APIEnablements
		out.Status.NodeSummary = &policy.NodeSummary{TotalNum: cp.Nodes, ReadyNum: cp.ReadyNodes}
		if len(cp.Allocatable) > 0 {
			// No summary is unbounded capacity to simulate; an empty one is none.
			out.Status.ResourceSummary = &policy.ResourceSummary{Allocatable: cp.Allocatable, Allocated: cp.Allocated, Allocating: cp.Allocating}
		}
	}
	return out
}

// orReason: a condition's reason is required by Kubernetes' schema.
func orReason(r string) string {
	if r == "" {
		return "Unknown"
	}
	return r
}

// BindingName is Karmada's name for a template's ResourceBinding:
// NAME-KIND, lower case.
func BindingName(key events.ObjectKey) string {
	return key.Name + "-" + strings.ToLower(key.Kind)
}

// BindingObject is the template's placement and work as Karmada's
// work.karmada.io/v1alpha2 ResourceBinding (ClusterResourceBinding for a
// cluster-scoped template): spec.resource, spec.replicas, spec.clusters,
// spec.gracefulEvictionTasks for the evictions, and status with the
// Scheduled condition and one aggregatedStatus entry per member, its
// phase as every view shows it (Template.Phase).
func (f Fleet) BindingObject(t Template) map[string]any {
	p := t.Placement
	apiVersion := p.Key.Group + "/v1"
	if p.Key.Group == "" {
		apiVersion = "v1"
	}
	if r, ok := f.Published.Records[p.Key]; ok && r.APIVersion != "" {
		apiVersion = r.APIVersion
	}
	kind, md := "ResourceBinding", map[string]any{"name": BindingName(p.Key)}
	if p.Key.Namespace == "" {
		kind = "ClusterResourceBinding"
	} else {
		md["namespace"] = p.Key.Namespace
	}
	resource := map[string]any{"apiVersion": apiVersion, "kind": p.Key.Kind, "name": p.Key.Name}
	if p.Key.Namespace != "" {
		resource["namespace"] = p.Key.Namespace
	}
	_, desired := t.Totals()
	clusters := []any{}
	for _, c := range p.Clusters {
		clusters = append(clusters, map[string]any{"name": c.Name, "replicas": c.Replicas})
	}
	spec := map[string]any{"resource": resource, "clusters": clusters}
	if desired > 0 {
		spec["replicas"] = desired
	}
	if tasks := EvictionTasks(p); tasks != nil {
		var generic []any
		b, _ := json.Marshal(tasks)
		_ = json.Unmarshal(b, &generic)
		spec["gracefulEvictionTasks"] = generic
	}
	obj := map[string]any{"apiVersion": WorkAPIVersion, "kind": kind, "metadata": md, "spec": spec}
	setMeta(obj, p.BindingRevision, f.Published.Created(p.Key, p.DecidedAt))
	scheduled := map[string]any{"type": "Scheduled", "status": "True", "reason": "Success", "message": orNoneString(p.Division)}
	if !p.Scheduled {
		scheduled["status"], scheduled["reason"], scheduled["message"] = "False", "SchedulerError", p.Error
	}
	if !p.DecidedAt.IsZero() {
		scheduled["lastTransitionTime"] = p.DecidedAt.UTC().Format(time.RFC3339)
	}
	status := map[string]any{"schedulerObservedGeneration": p.BindingRevision, "conditions": []any{scheduled}}
	if !p.DecidedAt.IsZero() {
		status["lastScheduledTime"] = p.DecidedAt.UTC().Format(time.RFC3339)
	}
	var aggregated []any
	for _, s := range t.Work {
		phase, msg := t.Phase(s)
		health := t.work.Health(s)
		if health == "" {
			health = events.WorkHealthUnknown
		}
		a := map[string]any{"clusterName": s.Cluster, "applied": phase != events.WorkPending && phase != events.WorkFailed, "health": health,
			"status": map[string]any{"phase": phase, "replicas": t.Desired(s), "readyReplicas": s.ReadyReplicas, "generation": s.Generation}}
		if msg != "" {
			a["appliedMessage"] = msg
		}
		aggregated = append(aggregated, a)
	}
	if aggregated != nil {
		status["aggregatedStatus"] = aggregated
	}
	obj["status"] = status
	return obj
}

func orNoneString(s string) string {
	if s == "" {
		return "placed"
	}
	return s
}

// DeadLetterObject is a dead letter as an object of Flotilla's own group:
// Karmada has none.
func DeadLetterObject(d DeadLetter) map[string]any {
	data, _ := json.Marshal(d.DeadLetter)
	var spec map[string]any
	_ = json.Unmarshal(data, &spec)
	return map[string]any{"apiVersion": FlotillaAPIVersion, "kind": "DeadLetter",
		"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(d.Stream, "FLOTILLA_")), "_", "-"), d.Sequence), "creationTimestamp": d.At.UTC().Format(time.RFC3339)},
		"spec":     spec}
}

// ObjectLabels are the labels of an accepted object.
func ObjectLabels(r events.ObjectRecord) map[string]string {
	return setMeta(decodeObject(r.Object), 0, time.Time{})
}

// Keys are the templates with a placement or work, in key order: the
// objects `get work` and `get placements` list.
func (f Fleet) Keys() []events.ObjectKey {
	seen := map[events.ObjectKey]bool{}
	var out []events.ObjectKey
	for _, p := range f.Decisions {
		if !seen[p.Key] {
			seen[p.Key], out = true, append(out, p.Key)
		}
	}
	for _, s := range f.Work.Items {
		if !seen[s.Key] {
			seen[s.Key], out = true, append(out, s.Key)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// AppliedObject is the accepted object as it was applied (a copy).
func AppliedObject(r events.ObjectRecord) map[string]any { return decodeObject(r.Object) }

// GracefulEvictionTask is one of a ResourceBinding's
// spec.gracefulEvictionTasks (work.karmada.io/v1alpha2), as Flotilla fills
// it from a placement's eviction.
type GracefulEvictionTask struct {
	FromCluster string `json:"fromCluster"`
	Replicas    int32  `json:"replicas,omitempty"`
	Reason      string `json:"reason"`
	Message     string `json:"message,omitempty"`
	Producer    string `json:"producer"`
	PurgeMode   string `json:"purgeMode,omitempty"`
	// GracePeriodSeconds of a Gracefully evicted copy.
	GracePeriodSeconds int32 `json:"gracePeriodSeconds,omitempty"`
	// SuppressDeletion: purgeMode Never (kept until a user decides).
	SuppressDeletion       bool              `json:"suppressDeletion,omitempty"`
	PreservedLabelState    map[string]string `json:"preservedLabelState,omitempty"`
	ClustersBeforeFailover []string          `json:"clustersBeforeFailover,omitempty"`
	CreationTimestamp      metav1.Time       `json:"creationTimestamp"`
}

// EvictionTasks are placement p's evictions as Karmada's graceful
// eviction tasks; nil without any.
func EvictionTasks(p events.PlacementDecision) []GracefulEvictionTask {
	var out []GracefulEvictionTask
	for _, e := range p.Evictions {
		out = append(out, GracefulEvictionTask{FromCluster: e.Cluster, Replicas: e.Replicas, Reason: e.Reason, Message: e.Message,
			Producer: "flotilla", PurgeMode: e.PurgeMode, GracePeriodSeconds: e.GracePeriodSeconds, SuppressDeletion: e.PurgeMode == events.PurgeNever,
			PreservedLabelState: e.PreservedLabels, ClustersBeforeFailover: e.ClustersBeforeFailover, CreationTimestamp: metav1.NewTime(e.EvictedAt.UTC().Truncate(time.Second))})
	}
	return out
}
