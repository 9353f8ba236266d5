package events

// Type is a CloudEvent type: reverse-DNS, a past-tense fact, a version suffix.
type Type string

// The event catalogue. Each type's subject and stream are in Catalogue below;
// docs/events.md shows an example of each.
const (
	// Input: what users and external systems ask for (CLI apply/delete/join, or `flotilla publish`).
	TypeObjectApplied = Type("io.flotilla.object.applied.v1") // data: the Kubernetes object (JSON)
	TypeObjectDeleted = Type("io.flotilla.object.deleted.v1") // data: apiVersion, kind, metadata.name/namespace
	TypeSecretSealed  = Type("io.flotilla.secret.sealed.v1")  // data: SealedSecret (cluster credentials, sealed)
	// data: apiVersion, kind, metadata.name/namespace of the template to place afresh
	TypeRescheduleRequested = Type("io.flotilla.reschedule.requested.v1")

	// policyd
	TypeObjectAccepted      = Type("io.flotilla.object.accepted.v1")      // data: ObjectRecord
	TypeObjectRemoved       = Type("io.flotilla.object.removed.v1")       // data: ObjectRecord (no object)
	TypeObjectRejected      = Type("io.flotilla.object.rejected.v1")      // data: Rejection
	TypeBindingChanged      = Type("io.flotilla.binding.changed.v1")      // data: Binding
	TypeBindingRemoved      = Type("io.flotilla.binding.removed.v1")      // data: Binding (key and generation only)
	TypeClusterRegistered   = Type("io.flotilla.cluster.registered.v1")   // data: ClusterRegistration
	TypeClusterDeregistered = Type("io.flotilla.cluster.deregistered.v1") // data: ClusterRegistration (name, and generation: a tombstone)

	// daemons holding the credentials key announce its public half, so the CLI can seal to it.
	TypeSealKeyPublished = Type("io.flotilla.sealkey.published.v1") // data: SealKey

	// healthd
	TypeClusterHealthChanged    = Type("io.flotilla.cluster.health.changed.v1")    // data: ClusterHealth
	TypeClusterCapacityReported = Type("io.flotilla.cluster.capacity.reported.v1") // data: ClusterCapacity
	TypeClusterHealthSnapshot   = Type("io.flotilla.cluster.health.snapshot.v1")   // data: HealthSnapshot

	// schedulerd
	TypePlacementDecided = Type("io.flotilla.placement.decided.v1") // data: PlacementDecision
	TypePlacementRemoved = Type("io.flotilla.placement.removed.v1") // data: PlacementDecision (key only)

	// schedulerd, one per member cluster a placement concerns: what that
	// cluster must apply, and nothing of other clusters (AssignmentOf).
	TypeWorkAssigned   = Type("io.flotilla.work.assigned.v1")   // data: PlacementDecision narrowed to the cluster
	TypeWorkUnassigned = Type("io.flotilla.work.unassigned.v1") // data: PlacementDecision narrowed to the cluster (no target)

	TypeFailoverEvicted = Type("io.flotilla.failover.evicted.v1") // data: FailoverRecord
	TypeFailoverPurged  = Type("io.flotilla.failover.purged.v1")  // data: FailoverRecord

	// executord
	TypeWorkStatusChanged = Type("io.flotilla.work.status.changed.v1") // data: WorkStatus
	TypeWorkDeleted       = Type("io.flotilla.work.deleted.v1")        // data: WorkStatus

	// the bus itself
	TypeEventDeadLettered = Type("io.flotilla.event.deadlettered.v1") // data: DeadLetter
)

// Stream names. Streams use limits retention so history can be replayed.
const (
	StreamInput      = "FLOTILLA_INPUT"
	StreamPolicy     = "FLOTILLA_POLICY"
	StreamHealth     = "FLOTILLA_HEALTH"
	StreamPlacement  = "FLOTILLA_PLACEMENT"
	StreamWork       = "FLOTILLA_WORK"
	StreamDeadLetter = "FLOTILLA_DEADLETTER"
)

// StreamSpec describes one JetStream stream.
// Streams are tables keyed by subject: the newest message of a subject is
// the current state of that object, so no stream ages messages out (that
// would erase current state); history is bounded per subject instead.
type StreamSpec struct {
	Name     string
	Subjects []string
	// MaxPerSubject bounds the history kept for each subject: a subject
	// with more messages loses its oldest. It never removes a subject's
	// newest message, its row.
	MaxPerSubject int64
	// MaxBytes bounds the stream's storage (JetStream reserves it up front).
	// A full table refuses a new message (discard-new: the publisher gets
	// an error) instead of discarding the stream's oldest, which can be the
	// only row of a long-quiet subject; a subject at MaxPerSubject still
	// replaces its oldest message on one server. A full Log discards its
	// oldest messages.
	MaxBytes int64
	// Log marks a stream nothing reads current rows from (a queue of
	// requests, a record of failures): when full it keeps taking messages
	// and its oldest go, so a full log never stops the daemons writing it.
	Log bool
	Doc string
}

// streamBytes is every stream's storage cap: 4 GiB.
const streamBytes = 4 << 30

// Streams lists every stream Flotilla creates (idempotently, at start-up).
var Streams = []StreamSpec{
	{Name: StreamInput, Subjects: []string{"flotilla.input.>"}, MaxPerSubject: 1000, MaxBytes: streamBytes, Log: true,
		Doc: "objects applied/deleted by users and external systems"},
	{Name: StreamPolicy, Subjects: []string{"flotilla.object.>", "flotilla.rejected.>", "flotilla.binding.>", "flotilla.member.>", "flotilla.sealkey"}, MaxPerSubject: 1000, MaxBytes: streamBytes,
		Doc: "policyd's accepted state, rejections, bindings, member registrations"},
	{Name: StreamHealth, Subjects: []string{"flotilla.health.>", "flotilla.capacity.>", HealthSnapshotSubject}, MaxPerSubject: 100, MaxBytes: streamBytes,
		Doc: "healthd's health transitions and capacity reports"},
	{Name: StreamPlacement, Subjects: []string{"flotilla.placement.>", "flotilla.failover.>"}, MaxPerSubject: 1000, MaxBytes: streamBytes,
		Doc: "schedulerd's placement decisions and failover history"},
	{Name: StreamWork, Subjects: []string{"flotilla.work.>", "flotilla.assignment.>"}, MaxPerSubject: 100, MaxBytes: streamBytes,
		Doc: "per-cluster work: what each member must apply (schedulerd) and its status there (executord)"},
	{Name: StreamDeadLetter, Subjects: []string{"flotilla.deadletter.>"}, MaxPerSubject: 1000, MaxBytes: streamBytes, Log: true,
		Doc: "events a consumer could not handle, with the reason"},
}

// Entry is one row of the catalogue: an event type, who produces it, the
// subject it is published on and the stream that stores it.
type Entry struct {
	Type     Type
	Producer string
	Subject  string // pattern; <key> = <namespace>.<group>.<Kind>.<name>
	Stream   string
	Doc      string
}

// Catalogue is the one table of every event type. docs/events.md mirrors it
// (a test keeps the two in step).
var Catalogue = []Entry{
	{TypeObjectApplied, "CLI / external", "flotilla.input.<key>", StreamInput, "a template, policy or Cluster was applied"},
	{TypeObjectDeleted, "CLI / external", "flotilla.input.<key>", StreamInput, "a template, policy or Cluster was deleted"},
	{TypeSecretSealed, "CLI", "flotilla.input.<key>", StreamInput, "cluster credentials, sealed to the credentials key"},
	{TypeRescheduleRequested, "CLI / external", "flotilla.input.<key>", StreamInput, "place a template afresh (flotilla reschedule), as Karmada's rescheduleTriggeredAt"},
	{TypeObjectAccepted, "policyd", "flotilla.object.<key>", StreamPolicy, "policyd validated and stored an object (with its generation)"},
	{TypeObjectRemoved, "policyd", "flotilla.object.<key>", StreamPolicy, "policyd removed an object"},
	{TypeObjectRejected, "policyd", "flotilla.rejected.<key>", StreamPolicy, "policyd refused an object, with the reasons"},
	{TypeBindingChanged, "policyd", "flotilla.binding.<key>", StreamPolicy, "a template's matched policy, overrides or content changed"},
	{TypeBindingRemoved, "policyd", "flotilla.binding.<key>", StreamPolicy, "a template was deleted or no policy matches it any more"},
	{TypeClusterRegistered, "policyd", "flotilla.member.<cluster>", StreamPolicy, "a member cluster joined or its Cluster object changed"},
	{TypeClusterDeregistered, "policyd", "flotilla.member.<cluster>", StreamPolicy, "a member cluster was removed"},
	{TypeSealKeyPublished, "healthd, executord", "flotilla.sealkey", StreamPolicy, "the public key credentials are sealed to"},
	{TypeClusterHealthChanged, "healthd", "flotilla.health.<cluster>", StreamHealth, "a member's readiness changed"},
	{TypeClusterCapacityReported, "healthd", "flotilla.capacity.<cluster>", StreamHealth, "a member's allocatable/allocated resources changed"},
	{TypeClusterHealthSnapshot, "healthd", HealthSnapshotSubject, StreamHealth, "every member's health, periodically, for consumers that resync"},
	{TypePlacementDecided, "schedulerd", "flotilla.placement.<key>", StreamPlacement, "where a template runs and why"},
	{TypePlacementRemoved, "schedulerd", "flotilla.placement.<key>", StreamPlacement, "a template is placed nowhere any more"},
	{TypeFailoverEvicted, "schedulerd", "flotilla.failover.<key>", StreamPlacement, "a template was moved away from a cluster, with why, from where and to where"},
	{TypeFailoverPurged, "schedulerd", "flotilla.failover.<key>", StreamPlacement, "an evicted cluster's old copy was released for deletion"},
	{TypeWorkAssigned, "schedulerd", "flotilla.assignment.<cluster>.<key>", StreamWork, "what one member must apply of a placement: its target, its overrides, nothing of other clusters"},
	{TypeWorkUnassigned, "schedulerd", "flotilla.assignment.<cluster>.<key>", StreamWork, "a member no longer holds a template: remove it there"},
	{TypeWorkStatusChanged, "executord", "flotilla.work.<cluster>.<key>", StreamWork, "an object's state in one member changed"},
	{TypeWorkDeleted, "executord", "flotilla.work.<cluster>.<key>", StreamWork, "an object was removed from one member"},
	{TypeEventDeadLettered, "any consumer", "flotilla.deadletter.<consumer>", StreamDeadLetter, "an event that could not be handled, with the reason"},
}

// Lookup returns the catalogue entry of t.
func Lookup(t Type) (Entry, bool) {
	for _, e := range Catalogue {
		if e.Type == t {
			return e, true
		}
	}
	return Entry{}, false
}

// Subjects of the catalogue. Consumers filter on them without decoding.
func InputSubject(k ObjectKey) string     { return "flotilla.input." + k.subjectTokens() }
func ObjectSubject(k ObjectKey) string    { return "flotilla.object." + k.subjectTokens() }
func RejectedSubject(k ObjectKey) string  { return "flotilla.rejected." + k.subjectTokens() }
func BindingSubject(k ObjectKey) string   { return "flotilla.binding." + k.subjectTokens() }
func PlacementSubject(k ObjectKey) string { return "flotilla.placement." + k.subjectTokens() }
func MemberSubject(cluster string) string { return "flotilla.member." + token(cluster) }
func HealthSubject(cluster string) string { return "flotilla.health." + token(cluster) }
func CapacitySubject(cluster string) string {
	return "flotilla.capacity." + token(cluster)
}
func WorkSubject(cluster string, k ObjectKey) string {
	return "flotilla.work." + token(cluster) + "." + k.subjectTokens()
}

// AssignmentSubject carries what cluster must apply of k's placement. The
// cluster token comes before the key so that one filter,
// AssignmentsOf(cluster), selects a cluster's work (and a credential can be
// held to it); see DESIGN.md decision 23 for the subject layout.
func AssignmentSubject(cluster string, k ObjectKey) string {
	return "flotilla.assignment." + token(cluster) + "." + k.subjectTokens()
}

// AssignmentsOf is the filter of every assignment of cluster.
func AssignmentsOf(cluster string) string { return "flotilla.assignment." + token(cluster) + ".>" }

// WorkOf is the filter of every work status of cluster.
func WorkOf(cluster string) string { return "flotilla.work." + token(cluster) + ".>" }

func FailoverSubject(k ObjectKey) string       { return "flotilla.failover." + k.subjectTokens() }
func DeadLetterSubject(consumer string) string { return "flotilla.deadletter." + token(consumer) }

// SealKeySubject carries the credentials public key.
const SealKeySubject = "flotilla.sealkey"

// HealthSnapshotSubject carries healthd's periodic HealthSnapshot (outside
// flotilla.health.<cluster>, so no cluster name can collide with it).
const HealthSnapshotSubject = "flotilla.health-snapshot"

// Wildcards for consumers.
const (
	AllInput      = "flotilla.input.>"
	AllObjects    = "flotilla.object.>"
	AllRejected   = "flotilla.rejected.>"
	AllBindings   = "flotilla.binding.>"
	AllMembers    = "flotilla.member.>"
	AllHealth     = "flotilla.health.>"
	AllCapacity   = "flotilla.capacity.>"
	AllPlacements = "flotilla.placement.>"
	AllFailover   = "flotilla.failover.>"
	AllWork       = "flotilla.work.>"
	AllAssigned   = "flotilla.assignment.>"
	AllDeadLetter = "flotilla.deadletter.>"
	// AllQuotas: the records of every FederatedResourceQuota
	// (flotilla.object.<key> with the policy.karmada.io group and its kind).
	AllQuotas = "flotilla.object.*.policy_karmada_io.FederatedResourceQuota.*"
)
