package events

import (
	"encoding/json"
	"time"

	"github.com/flotilla-io/flotilla/events/policy"
	corev1 "k8s.io/api/core/v1"
)

// ObjectRecord is policyd's stored view of one accepted object (template,
// policy or Cluster). Generation counts accepted content changes of that
// object, starting at 1; re-applying identical content changes nothing.
type ObjectRecord struct {
	Key        ObjectKey       `json:"key"`
	APIVersion string          `json:"apiVersion"`
	Generation int64           `json:"generation"`
	Object     json.RawMessage `json:"object,omitempty"`
	Warnings   []string        `json:"warnings,omitempty"`
	// Role says what policyd takes the object for: template, policy, override, cluster.
	Role      string    `json:"role"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Object roles.
const (
	RoleTemplate = "template"
	RolePolicy   = "policy"
	RoleOverride = "override"
	RoleCluster  = "cluster"
)

// Rejection says why policyd refused an object. Every problem carries its
// field path.
type Rejection struct {
	Key      ObjectKey    `json:"key"`
	Problems []FieldError `json:"problems"`
}

// FieldError is one validation problem: where (document, field path, line)
// and why.
type FieldError struct {
	File     string `json:"file,omitempty"`
	Document int    `json:"document,omitempty"` // 1-based index in a multi-document file
	Line     int    `json:"line,omitempty"`
	Field    string `json:"field"`
	Reason   string `json:"reason"`
}

// SealedSecret carries a Secret whose data is sealed to the credentials key.
// It is never a template and is never propagated.
type SealedSecret struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	KeyID     string            `json:"keyId"`
	Data      map[string][]byte `json:"data"` // each value sealed (anonymous NaCl box)
}

// SealKey is the public half of the credentials key.
type SealKey struct {
	KeyID     string `json:"keyId"`
	PublicKey []byte `json:"publicKey"`
}

// ClusterRegistration is a member cluster as policyd knows it: the Cluster
// object (labels, provider/region/zones, taints, apiEndpoint) and its
// credentials, still sealed.
type ClusterRegistration struct {
	Name        string             `json:"name"`
	Generation  int64              `json:"generation"`
	Labels      map[string]string  `json:"labels,omitempty"`
	Annotations map[string]string  `json:"annotations,omitempty"`
	Spec        policy.ClusterSpec `json:"spec"`
	// Credentials is the sealed kubeconfig of the member (key "kubeconfig").
	Credentials *SealedSecret `json:"credentials,omitempty"`
}

// Binding is a template joined with what decides its fate: the policy that
// claimed it and the override policies that apply to it, in the order they
// apply. Revision increases with every change of any of these;
// Generation is the template's own generation.
type Binding struct {
	Key        ObjectKey `json:"key"`
	APIVersion string    `json:"apiVersion"`
	UID        string    `json:"uid,omitempty"`
	Generation int64     `json:"generation"`
	Revision   int64     `json:"revision"`
	// Template is the resource template as applied (JSON).
	Template json.RawMessage `json:"template,omitempty"`
	// Replicas is the desired replica count of a workload kind (0 otherwise).
	Replicas int32 `json:"replicas"`
	// ReplicaRequirements are one replica's resource requests, when known.
	ReplicaRequirements corev1.ResourceList     `json:"replicaRequirements,omitempty"`
	Policy              *PolicyRef              `json:"policy,omitempty"`
	Spec                *policy.PropagationSpec `json:"spec,omitempty"`
	Overrides           []policy.OverridePolicy `json:"overrides,omitempty"`
	// Dependencies are the ConfigMaps, Secrets, PVCs and ServiceAccount the
	// workload references, when its policy says propagateDeps: they follow it
	// to the same clusters.
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// RescheduleRequestedAt asks for a fresh reschedule (flotilla reschedule).
	RescheduleRequestedAt *time.Time `json:"rescheduleRequestedAt,omitempty"`
}

// Dependency is a template that follows a workload (propagateDeps).
type Dependency struct {
	Key        ObjectKey       `json:"key"`
	APIVersion string          `json:"apiVersion"`
	Generation int64           `json:"generation"`
	Template   json.RawMessage `json:"template"`
}

// PolicyRef names the policy that claimed a template.
type PolicyRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// TargetCluster is one entry of a placement: a cluster and its replicas.
type TargetCluster struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
}

// PlacementDecision is schedulerd's answer for one binding revision: where
// the template runs, and why every other cluster was left out.
type PlacementDecision struct {
	Key             ObjectKey       `json:"key"`
	Generation      int64           `json:"generation"`
	BindingRevision int64           `json:"bindingRevision"`
	Scheduled       bool            `json:"scheduled"`
	Clusters        []TargetCluster `json:"clusters"`
	Strategy        string          `json:"strategy,omitempty"`
	Feasible        []string        `json:"feasible,omitempty"`
	// Diagnosis: cluster -> reasons, each "<Plugin>: <reason>".
	Diagnosis map[string][]string `json:"diagnosis,omitempty"`
	Scores    map[string]int64    `json:"scores,omitempty"`
	// AffinityName is the clusterAffinities term the placement was computed
	// with; the next decision resumes there (reference §1.2).
	AffinityName string `json:"affinityName,omitempty"`
	// Division explains the replica arithmetic in one line.
	Division  string    `json:"division,omitempty"`
	Error     string    `json:"error,omitempty"`
	Warnings  []string  `json:"warnings,omitempty"`
	Binding   *Binding  `json:"binding,omitempty"`
	DecidedAt time.Time `json:"decidedAt"`
}

// Work phases, as `flotilla get work` shows them.
const (
	WorkPending     = "Pending"
	WorkApplied     = "Applied"
	WorkProgressing = "Progressing"
	WorkRunning     = "Running"
	WorkFailed      = "Failed"
	WorkDeleting    = "Deleting"
	WorkDeleted     = "Deleted"
)

// WorkStatus is one object in one member cluster.
type WorkStatus struct {
	Key             ObjectKey `json:"key"`
	Cluster         string    `json:"cluster"`
	Generation      int64     `json:"generation"`
	BindingRevision int64     `json:"bindingRevision"`
	Phase           string    `json:"phase"`
	Message         string    `json:"message,omitempty"`
	// ObservedGeneration is the member object's metadata.generation as observed.
	ObservedGeneration int64    `json:"observedGeneration,omitempty"`
	Replicas           int32    `json:"replicas,omitempty"`
	ReadyReplicas      int32    `json:"readyReplicas,omitempty"`
	AppliedOverrides   []string `json:"appliedOverrides,omitempty"`
	// AppliedHash identifies the exact manifest applied (for idempotence).
	AppliedHash string    `json:"appliedHash,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// ClusterHealth is healthd's view of a member's readiness.
type ClusterHealth struct {
	Cluster    string             `json:"cluster"`
	Ready      bool               `json:"ready"`
	State      string             `json:"state"` // Ready | Suspect | NotReady | Unreachable | Unknown
	Reason     string             `json:"reason,omitempty"`
	Message    string             `json:"message,omitempty"`
	Conditions []ClusterCondition `json:"conditions,omitempty"`
	// Taints healthd asks the scheduler to honour (not-ready / unreachable).
	Taints      []corev1.Taint `json:"taints,omitempty"`
	LastProbeMs int64          `json:"lastProbeMs,omitempty"`
	Since       time.Time      `json:"since"`
	ObservedAt  time.Time      `json:"observedAt"`
}

// ClusterCondition mirrors a Kubernetes condition.
type ClusterCondition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// ClusterCapacity is a member's resource summary (Karmada's
// status.resourceSummary) plus what it serves.
type ClusterCapacity struct {
	Cluster           string                 `json:"cluster"`
	KubernetesVersion string                 `json:"kubernetesVersion,omitempty"`
	Nodes             int32                  `json:"nodes"`
	ReadyNodes        int32                  `json:"readyNodes"`
	Allocatable       corev1.ResourceList    `json:"allocatable,omitempty"`
	Allocated         corev1.ResourceList    `json:"allocated,omitempty"`
	Allocating        corev1.ResourceList    `json:"allocating,omitempty"`
	APIEnablements    []policy.APIEnablement `json:"apiEnablements,omitempty"`
	ObservedAt        time.Time              `json:"observedAt"`
}

// DeadLetter is an event a consumer gave up on, with the reason.
type DeadLetter struct {
	Consumer   string            `json:"consumer"`
	Reason     string            `json:"reason"`
	Stream     string            `json:"stream,omitempty"`
	Sequence   uint64            `json:"sequence,omitempty"`
	Subject    string            `json:"subject"`
	Deliveries uint64            `json:"deliveries"`
	Headers    map[string]string `json:"headers,omitempty"`
	Data       []byte            `json:"data,omitempty"`
}
