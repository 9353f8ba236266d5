package policy

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is cluster.karmada.io/v1alpha1 Cluster.
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ClusterSpec   `json:"spec"`
	Status            ClusterStatus `json:"status,omitempty"`
}

// ClusterSpec is Karmada's cluster spec.
type ClusterSpec struct {
	ID                          string            `json:"id,omitempty"`
	SyncMode                    string            `json:"syncMode,omitempty"` // Push | Pull
	APIEndpoint                 string            `json:"apiEndpoint,omitempty"`
	SecretRef                   *LocalSecretRef   `json:"secretRef,omitempty"`
	ImpersonatorSecretRef       *LocalSecretRef   `json:"impersonatorSecretRef,omitempty"`
	InsecureSkipTLSVerification bool              `json:"insecureSkipTLSVerification,omitempty"`
	ProxyURL                    string            `json:"proxyURL,omitempty"`
	ProxyHeader                 map[string]string `json:"proxyHeader,omitempty"`
	Provider                    string            `json:"provider,omitempty"`
	Region                      string            `json:"region,omitempty"`
	Zone                        string            `json:"zone,omitempty"` // deprecated in favour of zones
	Zones                       []string          `json:"zones,omitempty"`
	Taints                      []corev1.Taint    `json:"taints,omitempty"`
	ResourceModels              []ResourceModel   `json:"resourceModels,omitempty"`
}

// Sync modes of a member cluster (spec.syncMode; empty means Push).
const (
	SyncModePush = "Push"
	SyncModePull = "Pull"
)

// PullMode is the one rule for who applies a cluster's work: in Pull mode
// its own executord (executord --cluster NAME, inside or beside the member)
// reads the cluster's assignments and the control plane's executord leaves
// it; otherwise the control plane's executord applies its placements and
// no assignment is written for it (DESIGN.md decision 23). A cluster is in
// Pull mode when its Cluster object says so: joined with
// join --sync-mode Pull, or applied with spec.syncMode: Pull.
func (s ClusterSpec) PullMode() bool { return s.SyncMode == SyncModePull }

// LocalSecretRef names a Secret holding credentials.
type LocalSecretRef struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// ResourceModel is one grade of Karmada's resource modelling.
type ResourceModel struct {
	Grade  uint                 `json:"grade"`
	Ranges []ResourceModelRange `json:"ranges"`
}

// ResourceModelRange bounds one resource in a grade.
type ResourceModelRange struct {
	Name string           `json:"name"`
	Min  resourceQuantity `json:"min"`
	Max  resourceQuantity `json:"max"`
}

// ClusterStatus is what Karmada's cluster-status controller records.
type ClusterStatus struct {
	KubernetesVersion string             `json:"kubernetesVersion,omitempty"`
	APIEnablements    []APIEnablement    `json:"apiEnablements,omitempty"`
	Conditions        []metav1.Condition `json:"conditions,omitempty"`
	NodeSummary       *NodeSummary       `json:"nodeSummary,omitempty"`
	ResourceSummary   *ResourceSummary   `json:"resourceSummary,omitempty"`
	RemedyActions     []string           `json:"remedyActions,omitempty"`
}

// APIEnablement lists the resources one group/version serves.
type APIEnablement struct {
	GroupVersion string        `json:"groupVersion"`
	Resources    []APIResource `json:"resources,omitempty"`
}

// APIResource is one served resource.
type APIResource struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// NodeSummary counts nodes.
type NodeSummary struct {
	TotalNum int32 `json:"totalNum,omitempty"`
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary is the capacity the general estimator reads.
type ResourceSummary struct {
	Allocatable          corev1.ResourceList   `json:"allocatable,omitempty"`
	Allocating           corev1.ResourceList   `json:"allocating,omitempty"`
	Allocated            corev1.ResourceList   `json:"allocated,omitempty"`
	AllocatableModelings []AllocatableModeling `json:"allocatableModelings,omitempty"`
}

// AllocatableModeling counts nodes per resource-model grade.
type AllocatableModeling struct {
	Grade uint `json:"grade"`
	Count int  `json:"count"`
}

// Condition types and taint keys Karmada uses.
const (
	ClusterConditionReady        = "Ready"
	ClusterConditionCompleteAPIs = "CompleteAPIEnablements"
	TaintClusterNotReady         = "cluster.karmada.io/not-ready"
	TaintClusterUnreachable      = "cluster.karmada.io/unreachable"
)

// ReadyTaint is Karmada's cluster controller rule: the key of the
// NoSchedule taint a cluster gets for the status of its Ready condition.
// True: none (tainted is false); False: cluster.karmada.io/not-ready;
// anything else (Unknown): cluster.karmada.io/unreachable. A cluster
// without a Ready condition is left to the caller (Karmada taints it
// not-ready; healthd does so for a cluster it has not judged yet, and
// flotilla simulate reads it as Ready). healthd taints the clusters it
// probes by this rule, and flotilla simulate the Cluster objects it is
// given.
func ReadyTaint(status string) (key string, tainted bool) {
	switch status {
	case "True":
		return "", false
	case "False":
		return TaintClusterNotReady, true
	default:
		return TaintClusterUnreachable, true
	}
}
