package events

// ObjectReference is the data of io.flotilla.object.deleted.v1 and
// io.flotilla.reschedule.requested.v1: which object, by apiVersion, kind,
// name and namespace (empty for a cluster-scoped object).
type ObjectReference struct {
	APIVersion string            `json:"apiVersion" jsonschema:"required"`
	Kind       string            `json:"kind" jsonschema:"required"`
	Metadata   ReferenceMetadata `json:"metadata" jsonschema:"required"`
}

// ReferenceMetadata is the metadata of an ObjectReference.
type ReferenceMetadata struct {
	Name      string `json:"name" jsonschema:"required"`
	Namespace string `json:"namespace,omitempty"`
}

// KubernetesObject is the data of io.flotilla.object.applied.v1: any
// Kubernetes object in JSON, decoded as a map (its kind decides the rest).
// Only its schema is narrower: apiVersion, kind and metadata.name are
// required.
type KubernetesObject map[string]any

// SchemaBase is where the JSON Schema of each event type's data is
// published: the repository's docs/schemas, one file per type, named
// <type>.json. DataSchema appends the file name.
const SchemaBase = "https://raw.githubusercontent.com/flotilla-io/flotilla/main/docs/schemas/"

// DataSchema is the dataschema attribute of events of type t: the URI of
// the JSON Schema of their data (docs/schemas/<type>.json).
func DataSchema(t Type) string { return SchemaBase + string(t) + ".json" }

// Payload returns a pointer to a new zero value of the Go type t's data
// decodes into, or nil for a type the catalogue does not list.
func Payload(t Type) any {
	switch t {
	case TypeObjectApplied:
		return &KubernetesObject{}
	case TypeObjectDeleted, TypeRescheduleRequested:
		return &ObjectReference{}
	case TypeSecretSealed:
		return &SealedSecret{}
	case TypeObjectAccepted, TypeObjectRemoved:
		return &ObjectRecord{}
	case TypeObjectRejected:
		return &Rejection{}
	case TypeBindingChanged, TypeBindingRemoved:
		return &Binding{}
	case TypeClusterRegistered, TypeClusterDeregistered:
		return &ClusterRegistration{}
	case TypeSealKeyPublished:
		return &SealKey{}
	case TypeClusterHealthChanged:
		return &ClusterHealth{}
	case TypeClusterCapacityReported:
		return &ClusterCapacity{}
	case TypeClusterHealthSnapshot:
		return &HealthSnapshot{}
	case TypePlacementDecided, TypePlacementRemoved:
		return &PlacementDecision{}
	case TypeFailoverEvicted, TypeFailoverPurged:
		return &FailoverRecord{}
	case TypeWorkStatusChanged, TypeWorkDeleted:
		return &WorkStatus{}
	case TypeEventDeadLettered:
		return &DeadLetter{}
	}
	return nil
}
