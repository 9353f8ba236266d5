package policy

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PropagationPolicy (namespaced) and ClusterPropagationPolicy share this shape.
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PropagationSpec `json:"spec"`
}

// PropagationSpec is Karmada's spec, plus Flotilla's documented extensions.
type PropagationSpec struct {
	ResourceSelectors           []ResourceSelector `json:"resourceSelectors"`
	Association                 bool               `json:"association,omitempty"`
	PropagateDeps               bool               `json:"propagateDeps,omitempty"`
	Placement                   Placement          `json:"placement,omitempty"`
	Priority                    *int32             `json:"priority,omitempty"`
	Preemption                  string             `json:"preemption,omitempty"` // Always | Never
	DependentOverrides          []string           `json:"dependentOverrides,omitempty"`
	SchedulerName               string             `json:"schedulerName,omitempty"`
	Failover                    *FailoverBehavior  `json:"failover,omitempty"`
	ConflictResolution          string             `json:"conflictResolution,omitempty"`   // Abort | Overwrite
	ActivationPreference        string             `json:"activationPreference,omitempty"` // Lazy
	Suspension                  *Suspension        `json:"suspension,omitempty"`
	PreserveResourcesOnDeletion *bool              `json:"preserveResourcesOnDeletion,omitempty"`
	SchedulePriority            *SchedulePriority  `json:"schedulePriority,omitempty"`
}

// ResourceSelector selects resource templates.
type ResourceSelector struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	Namespace     string                `json:"namespace,omitempty"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// Suspension pauses dispatching.
type Suspension struct {
	Dispatching           *bool            `json:"dispatching,omitempty"`
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters names clusters whose dispatching is suspended.
type SuspendClusters struct {
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// SchedulePriority orders scheduling: the template's priority is the value
// of the PriorityClass it names (reference features §2).
type SchedulePriority struct {
	// PriorityClassSource: only KubePriorityClass (a scheduling.k8s.io/v1
	// PriorityClass) is implemented, as in Karmada v1.19.
	PriorityClassSource string `json:"priorityClassSource"`
	PriorityClassName   string `json:"priorityClassName"`
}

// FailoverBehavior: how work moves on application or cluster failure.
type FailoverBehavior struct {
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`
	Cluster     *ClusterFailoverBehavior     `json:"cluster,omitempty"`

	// Flotilla extension (seed 002): detection rules such as "PodUnavailable > 30%".
	ApplicationFailureDetection []DetectionRule `json:"applicationFailureDetection,omitempty"`
	// Flotilla extension (seed 002): detection rules such as "API-Server-Timeout > 3min".
	ClusterFailureDetection []DetectionRule `json:"clusterFailureDetection,omitempty"`
}

// DetectionRule is one rule of the seed-002 failure detection grammar
// (docs/failover.md): "<metric> <op> <threshold>".
type DetectionRule struct {
	Rule string `json:"rule"`
}

// ApplicationFailoverBehavior moves a workload that is unhealthy in a cluster.
type ApplicationFailoverBehavior struct {
	DecisionConditions DecisionConditions `json:"decisionConditions"`
	// Directly | Gracefully | Never (and the older Immediately | Graciously).
	PurgeMode          string             `json:"purgeMode,omitempty"`
	GracePeriodSeconds *int32             `json:"gracePeriodSeconds,omitempty"`
	StatePreservation  *StatePreservation `json:"statePreservation,omitempty"`
}

// ClusterFailoverBehavior: how work leaves a failed cluster.
type ClusterFailoverBehavior struct {
	PurgeMode         string             `json:"purgeMode,omitempty"`
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions of application failover.
type DecisionConditions struct {
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// StatePreservation keeps state across a failover.
type StatePreservation struct {
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule is one preserved value.
type StatePreservationRule struct {
	AliasLabelName string `json:"aliasLabelName"`
	JSONPath       string `json:"jsonPath"`
}

// Placement: which clusters, and how replicas are spread over them.
type Placement struct {
	ClusterAffinity    *ClusterAffinity           `json:"clusterAffinity,omitempty"`
	ClusterAffinities  []ClusterAffinityTerm      `json:"clusterAffinities,omitempty"`
	ClusterTolerations []corev1.Toleration        `json:"clusterTolerations,omitempty"`
	SpreadConstraints  []SpreadConstraint         `json:"spreadConstraints,omitempty"`
	ReplicaScheduling  *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`
	// WorkloadAffinity groups workloads by a label (Karmada v1.17; reference
	// features §1): together in one cluster, or each in its own.
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`

	// Flotilla extension (seed 002 nests failover under placement); merged
	// into spec.failover with a warning.
	Failover *FailoverBehavior `json:"failover,omitempty"`
}

// SpreadConstraint spreads work over groups of clusters.
type SpreadConstraint struct {
	SpreadByField string `json:"spreadByField,omitempty"` // cluster | region | zone | provider
	SpreadByLabel string `json:"spreadByLabel,omitempty"`
	MaxGroups     int    `json:"maxGroups,omitempty"`
	MinGroups     int    `json:"minGroups,omitempty"`
}

// ClusterAffinity selects clusters.
type ClusterAffinity struct {
	LabelSelector   *metav1.LabelSelector `json:"labelSelector,omitempty"`
	FieldSelector   *FieldSelector        `json:"fieldSelector,omitempty"`
	ClusterNames    []string              `json:"clusterNames,omitempty"`
	ExcludeClusters []string              `json:"exclude,omitempty"`

	// Flotilla extension (seed 004): soft preferences that raise a cluster's
	// score and never filter.
	PreferredDuringSchedulingIgnoredDuringExecution []PreferredClusterTerm `json:"preferredDuringSchedulingIgnoredDuringExecution,omitempty"`
}

// PreferredClusterTerm is a weighted soft preference over cluster labels.
type PreferredClusterTerm struct {
	Weight     int32               `json:"weight"`
	Preference ClusterSelectorTerm `json:"preference"`
}

// ClusterSelectorTerm matches cluster labels (matchExpressions) and fields
// (matchFields: provider, region, zone).
type ClusterSelectorTerm struct {
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
	MatchFields      []corev1.NodeSelectorRequirement `json:"matchFields,omitempty"`
}

// FieldSelector filters clusters by provider, region and zone.
type FieldSelector struct {
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// ClusterAffinityTerm is one ordered group of clusterAffinities.
type ClusterAffinityTerm struct {
	AffinityName       string `json:"affinityName"`
	ClusterAffinity    `json:",inline"`
	OverflowAffinities []ClusterAffinity `json:"overflowAffinities,omitempty"`
}

// Replica scheduling types and preferences.
const (
	ReplicaSchedulingTypeDuplicated = "Duplicated"
	ReplicaSchedulingTypeDivided    = "Divided"

	DivisionPreferenceAggregated = "Aggregated"
	DivisionPreferenceWeighted   = "Weighted"
	// Flotilla extension (seed 002): minimise Σ price × replicas.
	DivisionPreferenceCostOptimized = "CostOptimized"

	DynamicWeightAvailableReplicas = "AvailableReplicas"
)

// ReplicaSchedulingStrategy: how replicas are assigned.
type ReplicaSchedulingStrategy struct {
	ReplicaSchedulingType     string              `json:"replicaSchedulingType,omitempty"`
	ReplicaDivisionPreference string              `json:"replicaDivisionPreference,omitempty"`
	WeightPreference          *ClusterPreferences `json:"weightPreference,omitempty"`

	// Flotilla extension (seed 002): α and β of the Cost score.
	CostWeights *CostWeights `json:"costWeights,omitempty"`
}

// CostWeights are the α (cpu) and β (memory) of the Cost score.
type CostWeights struct {
	CPU    *float64 `json:"cpu,omitempty"`
	Memory *float64 `json:"memory,omitempty"`
}

// ClusterPreferences: static or dynamic weights.
type ClusterPreferences struct {
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`
	DynamicWeight    string                `json:"dynamicWeight,omitempty"`

	// Seed 000's spelling of staticWeightList: accepted as an alias with a warning.
	StaticClusterWeight []StaticClusterWeight `json:"staticClusterWeight,omitempty"`
}

// StaticClusterWeight is one weight rule.
type StaticClusterWeight struct {
	TargetCluster ClusterAffinity `json:"targetCluster"`
	Weight        int64           `json:"weight"`
}

// StrategyKind is the resolved replica strategy (reference §2.1).
type StrategyKind string

// Resolved strategies.
const (
	StrategyDuplicated    StrategyKind = "Duplicated"
	StrategyStaticWeight  StrategyKind = "StaticWeight"
	StrategyDynamicWeight StrategyKind = "DynamicWeight"
	StrategyAggregated    StrategyKind = "Aggregated"
	StrategyCostOptimized StrategyKind = "CostOptimized"
	StrategyUnsupported   StrategyKind = "Unsupported"
)

// Strategy resolves the replica strategy as Karmada's newAssignState does.
func (p Placement) Strategy() StrategyKind {
	rs := p.ReplicaScheduling
	if rs == nil || rs.ReplicaSchedulingType == ReplicaSchedulingTypeDuplicated {
		return StrategyDuplicated
	}
	switch rs.ReplicaDivisionPreference {
	case DivisionPreferenceAggregated:
		return StrategyAggregated
	case DivisionPreferenceCostOptimized:
		return StrategyCostOptimized
	case DivisionPreferenceWeighted:
		if rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != "" {
			return StrategyDynamicWeight
		}
		return StrategyStaticWeight
	}
	return StrategyUnsupported
}
