package policy

import (
	"encoding/json"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OverridePolicy (namespaced) and ClusterOverridePolicy share this shape.
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              OverrideSpec `json:"spec"`
}

// OverrideSpec is Karmada's override spec.
type OverrideSpec struct {
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`
	OverrideRules     []RuleWithCluster  `json:"overrideRules,omitempty"`
	// Deprecated pair, used when overrideRules is empty.
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`
	Overriders    Overriders       `json:"overriders,omitempty"`
}

// RuleWithCluster: overriders for the clusters targetCluster matches (nil = all).
type RuleWithCluster struct {
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`
	Overriders    Overriders       `json:"overriders"`
}

// Overriders, applied in this order: image, command, args, labels,
// annotations, field, plaintext.
type Overriders struct {
	Plaintext            []PlaintextOverrider       `json:"plaintext,omitempty"`
	ImageOverrider       []ImageOverrider           `json:"imageOverrider,omitempty"`
	CommandOverrider     []CommandArgsOverrider     `json:"commandOverrider,omitempty"`
	ArgsOverrider        []CommandArgsOverrider     `json:"argsOverrider,omitempty"`
	LabelsOverrider      []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`
	FieldOverrider       []FieldOverrider           `json:"fieldOverrider,omitempty"`
}

// Override operators.
const (
	OverriderOpAdd     = "add"
	OverriderOpRemove  = "remove"
	OverriderOpReplace = "replace"
)

// PlaintextOverrider is one JSON-patch operation.
type PlaintextOverrider struct {
	Path     string          `json:"path"`
	Operator string          `json:"operator"`
	Value    json.RawMessage `json:"value,omitempty"`
}

// Image components.
const (
	ImageRegistry   = "Registry"
	ImageRepository = "Repository"
	ImageTag        = "Tag"
)

// ImageOverrider rewrites one component of image references.
type ImageOverrider struct {
	Predicate *ImagePredicate `json:"predicate,omitempty"`
	Component string          `json:"component"`
	Operator  string          `json:"operator"`
	Value     string          `json:"value,omitempty"`
}

// ImagePredicate points at one image string.
type ImagePredicate struct {
	Path string `json:"path"`
}

// CommandArgsOverrider edits a container's command or args.
type CommandArgsOverrider struct {
	ContainerName string   `json:"containerName"`
	Operator      string   `json:"operator"`
	Value         []string `json:"value,omitempty"`
}

// LabelAnnotationOverrider edits metadata labels or annotations.
type LabelAnnotationOverrider struct {
	Operator string            `json:"operator"`
	Value    map[string]string `json:"value,omitempty"`
}

// FieldOverrider edits JSON or YAML held inside a string field.
type FieldOverrider struct {
	FieldPath string               `json:"fieldPath"`
	JSON      []JSONPatchOperation `json:"json,omitempty"`
	YAML      []YAMLPatchOperation `json:"yaml,omitempty"`
}

// JSONPatchOperation is one operation inside a JSON document.
type JSONPatchOperation struct {
	SubPath  string          `json:"subPath"`
	Operator string          `json:"operator"`
	Value    json.RawMessage `json:"value,omitempty"`
}

// YAMLPatchOperation is one operation inside a YAML document.
type YAMLPatchOperation struct {
	SubPath  string          `json:"subPath"`
	Operator string          `json:"operator"`
	Value    json.RawMessage `json:"value,omitempty"`
}
