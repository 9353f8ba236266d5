package events

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unsafe"

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
	// CreatedAt: when the object's first generation was accepted; a new
	// generation keeps it (AGE is the creation time, as kubectl's).
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// InputSequence is the position on FLOTILLA_INPUT of the apply or
	// deletion policyd made this record from (0: not known). policyd
	// ignores an input of the object redelivered from before it (DESIGN.md
	// §4, stale redeliveries), also after a restart, which reads it back.
	InputSequence uint64 `json:"inputSequence,omitempty"`
}

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
	Overrides           []policy.OverridePolicy `json:"overrides,omitempty"`
	// Dependencies are the ConfigMaps, Secrets, PVCs and ServiceAccount the
	// workload references, when its policy says propagateDeps: they follow it
	// to the same clusters.
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// RescheduleRequestedAt asks for a fresh reschedule (flotilla reschedule).
	RescheduleRequestedAt *time.Time `json:"rescheduleRequestedAt,omitempty"`
	// WorkloadAffinityGroups are the template's groups (policy.GroupsOf);
	// nil for none.
	WorkloadAffinityGroups *policy.WorkloadAffinityGroups `json:"workloadAffinityGroups,omitempty"`
	// SchedulePriority is the template's schedule priority
	// (policy.SchedulePriorityOf): pending work is decided highest first.
	SchedulePriority int32 `json:"schedulePriority,omitempty"`
	// PriorityError says why the schedule priority could not be read (its
	// PriorityClass does not exist): the template is then not placed and
	// its placement says why (Karmada creates no binding).
	PriorityError string `json:"priorityError,omitempty"`
	// Components are a multi-component workload's components (reference
	// features §3.1), from its componentResource script; Replicas and
	// ReplicaRequirements are then 0 and empty.
	Components []policy.Component `json:"components,omitempty"`
	// Interpretation holds the ResourceInterpreterCustomization scripts of
	// the template's kind (policy.Merge), so that executord and the read
	// model run the same scripts policyd did; nil when there are none.
	Interpretation *policy.Interpretation `json:"interpretation,omitempty"`
	// InterpreterError says why a script policyd ran for this binding
	// (replicas, components, dependencies) failed: the template is then not
	// placed and its placement says why; nothing falls back to the
	// built-in interpretation.
	InterpreterError string `json:"interpreterError,omitempty"`
	// Warnings and AcceptedAt complete the template's accepted record
	// (ObjectRecord.Warnings and UpdatedAt of this Generation): a binding is
	// also the acceptance of the template generation it carries, and for a
	// template a policy claims policyd publishes the binding instead of an
	// object.accepted (TemplateRecord; DESIGN.md decision 15).
	Warnings   []string  `json:"warnings,omitempty"`
	AcceptedAt time.Time `json:"acceptedAt"`
	// CreatedAt: when the template's first generation was accepted
	// (ObjectRecord.CreatedAt).
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// InputSequence completes the record too (ObjectRecord.InputSequence).
	InputSequence uint64 `json:"inputSequence,omitempty"`
	// Spec is the claiming policy's spec. It is the last field so that a
	// spec encoded once for all the templates of a policy
	// (KeepSpecEncoding) is written where an encoding of the fields puts it.
	Spec *policy.PropagationSpec `json:"spec,omitempty"`

	// encoded is the JSON this binding was read from (SpecCache.DecodeBinding), written
	// back as is by MarshalJSON while the binding still holds what was read
	// (keptEncoding.holds): schedulerd embeds every binding it decides in the
	// placement, and re-encoding the template and policy spec it did not
	// change was a tenth of its CPU. Reencode drops it.
	encoded *keptEncoding
	// specText is the JSON of the spec Spec pointed to when it was kept
	// (KeepSpecEncoding): policyd encodes a policy's spec once for all the
	// templates it claims.
	specText *keptSpec
}

// keptEncoding is a binding's JSON as read, with what the binding held
// then: a copy of the binding whose fields were changed since (a field
// assigned, a slice or map or pointer replaced) is encoded afresh.
type keptEncoding struct {
	data                  []byte
	key                   ObjectKey
	apiVersion, uid       string
	generation, revision  int64
	replicas              int32
	template              *byte
	templateLen           int
	requirements          int
	policy                *PolicyRef
	spec                  *policy.PropagationSpec
	overrides             *policy.OverridePolicy
	overridesLen          int
	deps                  *Dependency
	depsLen               int
	reschedule            *time.Time
	groups                *policy.WorkloadAffinityGroups
	priority              int32
	priorityError         string
	warnings              *string
	warningsLen           int
	components            *policy.Component
	componentsLen         int
	interpretation        *policy.Interpretation
	interpreterError      string
	acceptedAt, createdAt time.Time
	inputSequence         uint64
}

func keep(data []byte, b *Binding) *keptEncoding {
	return &keptEncoding{data: data, key: b.Key, apiVersion: b.APIVersion, uid: b.UID, generation: b.Generation, revision: b.Revision,
		replicas: b.Replicas, template: unsafe.SliceData(b.Template), templateLen: len(b.Template), requirements: len(b.ReplicaRequirements),
		policy: b.Policy, spec: b.Spec, overrides: unsafe.SliceData(b.Overrides), overridesLen: len(b.Overrides),
		deps: unsafe.SliceData(b.Dependencies), depsLen: len(b.Dependencies), reschedule: b.RescheduleRequestedAt,
		groups: b.WorkloadAffinityGroups, priority: b.SchedulePriority, priorityError: b.PriorityError,
		components: unsafe.SliceData(b.Components), componentsLen: len(b.Components), interpretation: b.Interpretation, interpreterError: b.InterpreterError,
		warnings: unsafe.SliceData(b.Warnings), warningsLen: len(b.Warnings), acceptedAt: b.AcceptedAt, createdAt: b.CreatedAt,
		inputSequence: b.InputSequence}
}

// holds reports whether b still holds what was read with k.data.
func (k *keptEncoding) holds(b *Binding) bool {
	return k.key == b.Key && k.apiVersion == b.APIVersion && k.uid == b.UID && k.generation == b.Generation && k.revision == b.Revision &&
		k.replicas == b.Replicas && k.template == unsafe.SliceData(b.Template) && k.templateLen == len(b.Template) &&
		k.requirements == len(b.ReplicaRequirements) && k.policy == b.Policy && k.spec == b.Spec &&
		k.overrides == unsafe.SliceData(b.Overrides) && k.overridesLen == len(b.Overrides) &&
		k.deps == unsafe.SliceData(b.Dependencies) && k.depsLen == len(b.Dependencies) && k.reschedule == b.RescheduleRequestedAt &&
		k.groups == b.WorkloadAffinityGroups && k.priority == b.SchedulePriority && k.priorityError == b.PriorityError &&
		k.components == unsafe.SliceData(b.Components) && k.componentsLen == len(b.Components) &&
		k.interpretation == b.Interpretation && k.interpreterError == b.InterpreterError &&
		k.warnings == unsafe.SliceData(b.Warnings) && k.warningsLen == len(b.Warnings) && k.acceptedAt == b.AcceptedAt && k.createdAt == b.CreatedAt &&
		k.inputSequence == b.InputSequence
}

// IsWorkload is Karmada's IsWorkload: the binding has replicas,
// requirements or components. Such a template gets each cluster's count
// revised by its replicaRevision script (reference features §7.2.3).
func (b *Binding) IsWorkload() bool {
	return b.Replicas > 0 || len(b.ReplicaRequirements) > 0 || len(b.Components) > 0
}

// TemplateRecord is the accepted record of the template generation b
// carries: what an object.accepted for it would have said.
func (b *Binding) TemplateRecord() ObjectRecord {
	return ObjectRecord{Key: b.Key, APIVersion: b.APIVersion, Generation: b.Generation, Object: b.Template,
		Warnings: b.Warnings, Role: RoleTemplate, UpdatedAt: b.AcceptedAt, CreatedAt: b.CreatedAt, InputSequence: b.InputSequence}
}

// bindingFields is Binding without its methods (the plain encoding).
type bindingFields Binding

// MarshalJSON writes the JSON the binding was decoded from when it was kept
// (SpecCache.DecodeBinding), else the binding's fields as encoding/json would.
func (b Binding) MarshalJSON() ([]byte, error) {
	if b.encoded != nil && b.encoded.holds(&b) {
		return b.encoded.data, nil
	}
	if k := b.specText; k != nil && b.Spec != nil && k.spec == b.Spec {
		fields := bindingFields(b)
		fields.Spec = nil
		return MarshalJSON(bindingWithSpecText{bindingFields: fields, Spec: k.text})
	}
	return MarshalJSON(bindingFields(b))
}

// Reencode forgets the kept encoding: the binding is written from its
// fields again. Call it after changing a decoded binding, or to drop the
// bytes once they are no longer needed.
func (b *Binding) Reencode() { b.encoded = nil }

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

// Key is the policy's object key.
func (r PolicyRef) Key() ObjectKey {
	return ObjectKey{Group: "policy.karmada.io", Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// TargetCluster is one entry of a placement: a cluster and its replicas.
type TargetCluster struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas"`
	// Components: a multi-component workload placed whole here, each
	// component with all its replicas (reference features §3.2.4).
	Components []policy.ComponentReplicas `json:"components,omitempty"`
}

// FormatTargets writes a placement as "cluster1=2,cluster2=2" ("" for none),
// the way logs, replay summaries and tests show it.
func FormatTargets(cs []TargetCluster) string {
	var sb strings.Builder
	for i, c := range cs {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(c.Name)
		sb.WriteByte('=')
		sb.WriteString(strconv.Itoa(int(c.Replicas)))
	}
	return sb.String()
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
	Scores    *ClusterScores      `json:"scores,omitempty"`
	// AffinityName is the clusterAffinities term the placement was computed
	// with; the next decision resumes there (reference §1.2).
	AffinityName string `json:"affinityName,omitempty"`
	// Division explains the replica arithmetic in one line.
	Division  string    `json:"division,omitempty"`
	Error     string    `json:"error,omitempty"`
	Warnings  []string  `json:"warnings,omitempty"`
	Binding   *Binding  `json:"binding,omitempty"`
	DecidedAt time.Time `json:"decidedAt"`
	// Evictions are the clusters this template was failed away from
	// (Karmada's graceful eviction tasks, kept after the purge as a record):
	// none of them is a candidate until an explicit reschedule clears the
	// purged ones. executord keeps an evicted cluster's copy while its
	// eviction is not purged (PurgedAt nil) and its mode is not Directly,
	// and removes it once purged.
	Evictions []Eviction `json:"evictions,omitempty"`
}

// Purge modes of an eviction (Karmada's; the seed's older spellings
// Immediately and Graciously are normalised to Directly and Gracefully).
const (
	PurgeDirectly   = "Directly"
	PurgeGracefully = "Gracefully"
	PurgeNever      = "Never"
)

// Eviction reasons.
const (
	// EvictTaintUntolerated: a NoExecute taint the placement does not
	// tolerate (or tolerates for less time than it has been there).
	EvictTaintUntolerated = "TaintUntolerated"
	// EvictClusterFailure: a clusterFailureDetection rule held.
	EvictClusterFailure = "ClusterFailureDetection"
	// EvictApplicationFailure: the workload was unhealthy in the cluster
	// (or the cluster was NotReady/Unreachable) for longer than
	// failover.application.decisionConditions.tolerationSeconds.
	EvictApplicationFailure = "ApplicationFailure"
)

// Eviction is one cluster a template was moved away from.
type Eviction struct {
	Cluster string `json:"cluster"`
	// Reason is one of the Evict* constants; Message says it for people.
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// PurgeMode: PurgeDirectly, PurgeGracefully or PurgeNever.
	PurgeMode          string `json:"purgeMode"`
	GracePeriodSeconds int32  `json:"gracePeriodSeconds,omitempty"`
	// Replicas the cluster had when it was evicted.
	Replicas  int32     `json:"replicas,omitempty"`
	EvictedAt time.Time `json:"evictedAt"`
	// PurgedAt: when the old copy was released for deletion (nil while it
	// is kept); PurgeReason says why ("replacement healthy", "grace period
	// over", "purgeMode Directly").
	PurgedAt    *time.Time `json:"purgedAt,omitempty"`
	PurgeReason string     `json:"purgeReason,omitempty"`
	// Held: set while a Gracefully evicted copy is kept past its grace
	// period because no replacement is placed and healthy, and says which
	// ("no replacement could be placed", "the replacement is not healthy").
	// Karmada deletes the copy then; Flotilla keeps it until a replacement
	// is healthy, a reschedule or the template's deletion (docs/failover.md).
	Held string `json:"held,omitempty"`
	// PreservedLabels: the policy's statePreservation values read from the
	// evicted copy (aliasLabelName -> value, from the cluster's last
	// WorkStatus.PreservedState); executord adds them as labels to the copies
	// in clusters that are not in ClustersBeforeFailover (Karmada's
	// StatefulFailoverInjection).
	PreservedLabels        map[string]string `json:"preservedLabels,omitempty"`
	ClustersBeforeFailover []string          `json:"clustersBeforeFailover,omitempty"`
}

// Kept reports whether executord must keep the evicted cluster's copy.
func (e Eviction) Kept() bool { return e.PurgedAt == nil && e.PurgeMode != PurgeDirectly }

// FailoverRecord is one step of a template's failover history: an eviction
// (TypeFailoverEvicted) or the end of one (TypeFailoverPurged).
type FailoverRecord struct {
	Key      ObjectKey `json:"key"`
	Eviction Eviction  `json:"eviction"`
	// From is the placement before the step, To the one after it.
	From []TargetCluster `json:"from,omitempty"`
	To   []TargetCluster `json:"to,omitempty"`
	// Error: why the replicas could not be placed elsewhere, if they could not.
	Error string    `json:"error,omitempty"`
	At    time.Time `json:"at"`
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
	// WorkForbidden: the member refused Flotilla's credentials (RBAC, a
	// quota); executord retries with a long backoff until its admin fixes
	// it, and the message says what the credentials lack.
	WorkForbidden = "Forbidden"
)

// WorkReasonRefused: the member refused the manifest itself (422 Invalid,
// 413 too large, 400, an admission webhook's denial). The same manifest
// would be refused again, so executord does not retry it for this
// generation and binding revision; a new placement or template generation
// tries again.
const WorkReasonRefused = "MemberRefused"

// WorkReasonReleased: a copy left in its cluster when the cluster left
// Flotilla while the copy was placed there (unjoin --cascade=orphan, a
// Cluster deleted): Deleted from Flotilla's books, still in the member.
const WorkReasonReleased = "Released"

// Work health, as Karmada's resource interpreter reports it.
const (
	WorkHealthy       = "Healthy"
	WorkUnhealthy     = "Unhealthy"
	WorkHealthUnknown = "Unknown"
)

// WorkStatus is one object in one member cluster.
type WorkStatus struct {
	Key             ObjectKey `json:"key"`
	Cluster         string    `json:"cluster"`
	Generation      int64     `json:"generation"`
	BindingRevision int64     `json:"bindingRevision"`
	Phase           string    `json:"phase"`
	Message         string    `json:"message,omitempty"`
	// Reason is the machine-readable cause of a Failed phase, when there
	// is one: WorkReasonRefused.
	Reason string `json:"reason,omitempty"`
	// ObservedGeneration is the member object's metadata.generation as observed.
	ObservedGeneration int64    `json:"observedGeneration,omitempty"`
	Replicas           int32    `json:"replicas,omitempty"`
	ReadyReplicas      int32    `json:"readyReplicas,omitempty"`
	AppliedOverrides   []string `json:"appliedOverrides,omitempty"`
	// AppliedHash identifies the exact manifest applied (for idempotence).
	AppliedHash string `json:"appliedHash,omitempty"`
	// Health is the object's health as Karmada's resource interpreter
	// would judge it: WorkHealthy, WorkUnhealthy or WorkHealthUnknown ("" is
	// unknown too). A workload is Healthy when the member has observed its
	// generation and every desired replica is updated and available.
	Health string `json:"health,omitempty"`
	// AvailableReplicas and UnavailableReplicas of a workload
	// (UnavailableReplicas = desired - available, never negative); the
	// PodUnavailable rule is UnavailableReplicas / Replicas.
	AvailableReplicas   int32 `json:"availableReplicas,omitempty"`
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`
	// UnhealthySince: when executord first saw the object not Healthy in
	// the current run of such observations; nil while Healthy or unknown.
	UnhealthySince *time.Time `json:"unhealthySince,omitempty"`
	// PreservedState: the values of the template's failover
	// statePreservation rules (aliasLabelName -> value), each rule's
	// jsonPath evaluated against the member object's .status; only for
	// templates whose policy has such rules.
	PreservedState map[string]string `json:"preservedState,omitempty"`
	// Status is the member object's status as reflected for aggregation
	// (Karmada's manifestStatuses[].status): for templates whose kind has
	// a statusReflection or statusAggregation script, and for the kinds
	// whose status Karmada's default interpreter aggregates from more than
	// replica counts (batch Job, Service, Pod; executord.Reflect).
	Status    map[string]any `json:"status,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
	UpdatedAt time.Time      `json:"updatedAt"`
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
	// FailingSince: when the current run of failed probes began (nil while
	// probes succeed). clusterFailureDetection rules such as
	// "API-Server-Timeout > 3min" measure from here.
	FailingSince *time.Time `json:"failingSince,omitempty"`
	// LastProbeError is the last failed probe's error ("" after a success).
	LastProbeError string `json:"lastProbeError,omitempty"`
	// Since: when State began. ObservedAt: when healthd last looked.
	Since      time.Time `json:"since"`
	ObservedAt time.Time `json:"observedAt"`
}

// HealthSnapshot is healthd's periodic full view of every member, so a
// consumer that missed transitions (or restarted without replaying) can
// resync. Published on HealthSnapshotSubject.
type HealthSnapshot struct {
	Clusters []ClusterHealth `json:"clusters"`
	TakenAt  time.Time       `json:"takenAt"`
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
