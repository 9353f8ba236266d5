package simulate

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

const workAPIVersion = "work.karmada.io/v1alpha2"

// The labels/annotations Karmada's detector puts on a claimed template and
// its ResourceBinding to record which policy claimed it.
const (
	keyPolicyName        = "propagationpolicy.karmada.io/name"
	keyPolicyNamespace   = "propagationpolicy.karmada.io/namespace"
	keyClusterPolicyName = "clusterpropagationpolicy.karmada.io/name"
)

// bindingDoc is what a ResourceBinding in the input says about its
// template's current state.
type bindingDoc struct {
	label     string           // "file: document N: ResourceBinding NS/NAME", for warnings
	namespace string           // the binding's own namespace
	resource  events.ObjectKey // the template it binds
	uid       string           // spec.resource.uid
	policy    *events.PolicyRef
	// What core.Input takes.
	previous         []events.TargetCluster
	evicted          []string
	fresh            bool
	observedAffinity string
	// What the binding's current placement is to the others: its groups
	// (a peer) and its usage (against the namespace's quotas).
	groups *policy.WorkloadAffinityGroups
	usage  corev1.ResourceList
}

// resourceBinding is the part of work.karmada.io/v1alpha2 ResourceBinding
// the simulation reads; validation has checked the document already.
type resourceBinding struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Resource struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Namespace  string `json:"namespace"`
			Name       string `json:"name"`
			UID        string `json:"uid"`
		} `json:"resource"`
		Clusters            []events.TargetCluster `json:"clusters"`
		Replicas            int32                  `json:"replicas"`
		ReplicaRequirements *struct {
			ResourceRequest corev1.ResourceList `json:"resourceRequest"`
		} `json:"replicaRequirements"`
		Components             []policy.Component             `json:"components"`
		WorkloadAffinityGroups *policy.WorkloadAffinityGroups `json:"workloadAffinityGroups"`
		RescheduleTriggeredAt  *metav1.Time                   `json:"rescheduleTriggeredAt"`
		GracefulEvictionTasks  []struct {
			FromCluster string `json:"fromCluster"`
		} `json:"gracefulEvictionTasks"`
	} `json:"spec"`
	Status struct {
		LastScheduledTime             *metav1.Time `json:"lastScheduledTime"`
		SchedulerObservedAffinityName string       `json:"schedulerObservedAffinityName"`
	} `json:"status"`
}

func decodeBinding(d validation.Document) (*bindingDoc, error) {
	var rb resourceBinding
	if err := decodeDoc(d, &rb); err != nil {
		return nil, err
	}
	r := rb.Spec.Resource
	b := &bindingDoc{
		label:     fmt.Sprintf("%s: %s %s", d.Where(), d.Kind, qualified(d.Namespace, d.Name)),
		namespace: rb.Metadata.Namespace,
		resource:  events.KeyOf(r.APIVersion, r.Kind, r.Namespace, r.Name),
		uid:       r.UID,
		policy:    claimRecorded(rb.Metadata.Labels, rb.Metadata.Annotations),
		previous:  rb.Spec.Clusters,
	}
	if d.Kind == "ClusterResourceBinding" {
		b.namespace = ""
	}
	for _, t := range rb.Spec.GracefulEvictionTasks {
		b.evicted = append(b.evicted, t.FromCluster)
	}
	if trig, last := rb.Spec.RescheduleTriggeredAt, rb.Status.LastScheduledTime; trig != nil && last != nil && trig.After(last.Time) {
		b.fresh = true
	}
	b.observedAffinity = rb.Status.SchedulerObservedAffinityName
	if d.Kind == "ResourceBinding" {
		// Karmada never sets nor reads these on ClusterResourceBindings.
		if g := rb.Spec.WorkloadAffinityGroups; g != nil && *g != (policy.WorkloadAffinityGroups{}) {
			b.groups = g
		}
		var request corev1.ResourceList
		if rr := rb.Spec.ReplicaRequirements; rr != nil {
			request = rr.ResourceRequest
		}
		replicas := make([]int32, len(rb.Spec.Clusters))
		for i, c := range rb.Spec.Clusters {
			replicas[i] = c.Replicas
		}
		b.usage = policy.Usage(request, rb.Spec.Components, replicas)
	}
	return b, nil
}

func qualified(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// claimRecorded reads the policy Karmada recorded as the claimer, from
// annotations (Karmada >= 1.7) or labels (older releases).
func claimRecorded(labels, annotations map[string]string) *events.PolicyRef {
	for _, m := range []map[string]string{annotations, labels} {
		if name := m[keyPolicyName]; name != "" {
			return &events.PolicyRef{Kind: policy.KindPropagationPolicy, Namespace: m[keyPolicyNamespace], Name: name}
		}
		if name := m[keyClusterPolicyName]; name != "" {
			return &events.PolicyRef{Kind: policy.KindClusterPropagationPolicy, Name: name}
		}
	}
	return nil
}

// currentPolicy is the policy that already claims the template, if the
// input says so (its ResourceBinding, else the template's own
// annotations): binding.Claim keeps it while it still matches, unless a
// preempting policy takes the template.
func (td *templateDoc) currentPolicy() *events.PolicyRef {
	if td.binding != nil && td.binding.policy != nil {
		return td.binding.policy
	}
	md, _ := td.tmpl.Object["metadata"].(map[string]any)
	return claimRecorded(stringMap(md["labels"]), stringMap(md["annotations"]))
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}
