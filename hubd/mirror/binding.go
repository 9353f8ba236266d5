package mirror

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/readmodel"
)

// The work.karmada.io/v1alpha2 objects hubd writes on the hub: one
// ResourceBinding per placed namespaced template, one
// ClusterResourceBinding per placed cluster-scoped one. They are reports,
// never input: Flotilla's binding lives on the bus (events.Binding), and
// what a user writes into one of these is overwritten.

// BindingAPIVersion is the apiVersion of ResourceBinding and
// ClusterResourceBinding.
const BindingAPIVersion = "work.karmada.io/v1alpha2"

// ResourceBinding is work.karmada.io/v1alpha2 ResourceBinding (and, without
// a namespace, ClusterResourceBinding), with the fields Flotilla fills.
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ResourceBindingSpec   `json:"spec"`
	Status            ResourceBindingStatus `json:"status,omitempty"`
}

// ResourceBindingSpec says which template is placed and where.
type ResourceBindingSpec struct {
	Resource ObjectReference `json:"resource"`
	// Replicas is the template's desired replica count (0 for a kind
	// without replicas).
	Replicas int32 `json:"replicas,omitempty"`
	// Clusters are the clusters the template is placed on, by name, with
	// the replicas each runs.
	Clusters []TargetCluster `json:"clusters,omitempty"`
	// SchedulerName is the scheduler that placed it.
	SchedulerName string `json:"schedulerName,omitempty"`
	// GracefulEvictionTasks are the placement's evictions: the clusters a
	// failover moved the template off, their copies kept until purged.
	GracefulEvictionTasks []readmodel.GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`
}

// ObjectReference names the template a binding places.
type ObjectReference struct {
	APIVersion      string `json:"apiVersion"`
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name"`
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// TargetCluster is one cluster of a placement.
type TargetCluster struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas,omitempty"`
}

// ResourceBindingStatus holds the Scheduled and FullyApplied conditions
// and each cluster's applied status.
type ResourceBindingStatus struct {
	SchedulerObservedGeneration int64                  `json:"schedulerObservedGeneration,omitempty"`
	Conditions                  []metav1.Condition     `json:"conditions,omitempty"`
	AggregatedStatus            []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// AggregatedStatusItem is one cluster's report on the template.
type AggregatedStatusItem struct {
	ClusterName string         `json:"clusterName"`
	Status      map[string]any `json:"status,omitempty"`
	Applied     bool           `json:"applied,omitempty"`
	// AppliedMessage says why it is not applied.
	AppliedMessage string `json:"appliedMessage,omitempty"`
	// Health is Healthy, Unhealthy or Unknown.
	Health string `json:"health,omitempty"`
}

// Condition types and reasons written on bindings, Karmada's words.
const (
	ConditionScheduled    = "Scheduled"
	ConditionFullyApplied = "FullyApplied"
)

// PolicyStatus is the status hubd writes on a policy: one Accepted
// condition, False with the validation error when policyd refused it.
type PolicyStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionAccepted is the condition a policy's status carries.
const ConditionAccepted = "Accepted"
