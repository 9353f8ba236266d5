// Package render turns a resource template into the manifest that is applied
// in one member cluster: replicas set, Karmada override policies applied
// (reference §5), server-owned fields dropped. It is pure and shared by
// executord and `flotilla simulate`.
package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/policy/interpreter"
)

// Keys Render writes on every manifest.
const (
	// AnnotationAppliedOverrides lists the OverridePolicies applied (Karmada's key).
	AnnotationAppliedOverrides = "policy.karmada.io/applied-overrides"
	// AnnotationAppliedClusterOverrides lists the ClusterOverridePolicies applied (Karmada's key).
	AnnotationAppliedClusterOverrides = "policy.karmada.io/applied-cluster-overrides"
	// LabelManaged marks objects Flotilla created.
	LabelManaged = "flotilla.io/managed"
	// AnnotationTemplate names the template: "<namespace>/<Kind>/<name>".
	AnnotationTemplate = "flotilla.io/template"
)

// Cluster is what Render needs to know about the member cluster: what the
// targetCluster selectors of override rules look at.
type Cluster struct {
	Name   string
	Labels map[string]string
	Spec   policy.ClusterSpec
}

func (c Cluster) facts() policy.ClusterFacts {
	return policy.FactsOf(c.Name, c.Labels, c.Spec)
}

// OverrideError is a failed override: it aborts the render for the cluster.
type OverrideError struct {
	// Policy is "ClusterOverridePolicy/NAME" or "OverridePolicy/NS/NAME".
	Policy string
	// Rule is the index in spec.overrideRules; -1 for the deprecated
	// spec.targetCluster + spec.overriders form.
	Rule int
	// Overrider is e.g. "imageOverrider[0]" or "plaintext".
	Overrider string
	Err       error
}

func (e *OverrideError) Error() string {
	rule := fmt.Sprintf("overrideRules[%d]", e.Rule)
	if e.Rule < 0 {
		rule = "overriders (deprecated form)"
	}
	return fmt.Sprintf("override %s: %s: %s: %v", e.Policy, rule, e.Overrider, e.Err)
}

func (e *OverrideError) Unwrap() error { return e.Err }

// PolicyName is how Render names an override policy in its applied list and
// errors: "ClusterOverridePolicy/NAME" or "OverridePolicy/NS/NAME".
func PolicyName(p *policy.OverridePolicy) string {
	if c, _ := p.Scope(); c {
		return policy.KindClusterOverridePolicy + "/" + p.Name
	}
	return policy.KindOverridePolicy + "/" + p.Namespace + "/" + p.Name
}

// appliedShadow is one entry of Karmada's applied-(cluster-)overrides
// annotation: one per rule applied.
type appliedShadow struct {
	PolicyName string            `json:"policyName"`
	Overriders policy.Overriders `json:"overriders"`
}

// serverFields are the metadata fields the member API server owns.
var serverFields = []string{"uid", "resourceVersion", "managedFields", "creationTimestamp", "generation", "selfLink"}

// Render returns the manifest exactly as it is applied in cluster: a deep
// copy of template (numbers as int64/float64, as unstructured.Unstructured
// wants them) with
//   - replicas set when replicas != nil and the kind is one Karmada divides
//     (policy.ReplicaField: spec.replicas of apps Deployment, StatefulSet
//     and ReplicaSet, spec.parallelism of a batch Job);
//   - every rule of overrides whose targetCluster matches cluster applied,
//     policy by policy in the order given (reference §5): the binding's
//     overrides, which policyd took from policy.ApplicableOverrides;
//   - status and metadata uid/resourceVersion/managedFields/
//     creationTimestamp/generation/selfLink removed;
//   - the applied policies recorded in Karmada's applied-overrides
//     annotations, and Flotilla's managed label and template annotation set.
//
// applied names the policies that contributed at least one rule, in order
// ("ClusterOverridePolicy/NAME", "OverridePolicy/NS/NAME"). Any failure
// aborts the whole render with an *OverrideError.
func Render(template map[string]any, cluster Cluster, overrides []policy.OverridePolicy, replicas *int32) (map[string]any, []string, error) {
	obj, err := deepCopy(template)
	if err != nil {
		return nil, nil, fmt.Errorf("copy template: %w", err)
	}
	if replicas != nil {
		setReplicas(obj, *replicas)
	}
	facts := cluster.facts()
	var applied []string
	var clusterShadows, nsShadows []appliedShadow
	for i := range overrides {
		p := &overrides[i]
		name := PolicyName(p)
		rules, deprecated := p.Rules()
		contributed := false
		for ri, rule := range rules {
			if !rule.TargetCluster.Matches(facts) {
				continue
			}
			idx := ri
			if deprecated {
				idx = -1
			}
			obj, err = applyOverriders(obj, rule.Overriders)
			if err != nil {
				var oe *OverrideError
				if errors.As(err, &oe) {
					oe.Policy, oe.Rule = name, idx
					return nil, nil, oe
				}
				return nil, nil, &OverrideError{Policy: name, Rule: idx, Err: err}
			}
			contributed = true
			shadow := appliedShadow{PolicyName: p.Name, Overriders: rule.Overriders}
			if c, _ := p.Scope(); c {
				clusterShadows = append(clusterShadows, shadow)
			} else {
				nsShadows = append(nsShadows, shadow)
			}
		}
		if contributed {
			applied = append(applied, name)
		}
	}

	delete(obj, "status")
	meta, err := childMap(obj, "metadata", true)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range serverFields {
		delete(meta, f)
	}
	annotations, err := childMap(meta, "annotations", true)
	if err != nil {
		return nil, nil, err
	}
	for key, shadows := range map[string][]appliedShadow{
		AnnotationAppliedClusterOverrides: clusterShadows,
		AnnotationAppliedOverrides:        nsShadows,
	} {
		if len(shadows) == 0 {
			continue
		}
		b, err := json.Marshal(shadows)
		if err != nil {
			return nil, nil, err
		}
		annotations[key] = string(b)
	}
	r := policy.ResourceFactsOf(obj)
	annotations[AnnotationTemplate] = r.Namespace + "/" + r.Kind + "/" + r.Name
	labels, err := childMap(meta, "labels", true)
	if err != nil {
		return nil, nil, err
	}
	labels[LabelManaged] = "true"
	return obj, applied, nil
}

// Revise runs the kind's replicaRevision script (interp; nil or no script:
// template unchanged) with one cluster's replica count, as Karmada does
// before the overrides (reference features §7.2.3). executord and
// `flotilla simulate` revise the same way; a failure skips that cluster.
func Revise(interp *policy.Interpretation, template map[string]any, replicas int32) (map[string]any, error) {
	if interp == nil || interp.ReplicaRevision == "" {
		return template, nil
	}
	return interpreter.Default().Revise(interp.ReplicaRevision, template, replicas)
}

// applyOverriders applies one overriders block in Karmada's fixed order:
// image, command, args, labels, annotations, field, plaintext. It may return
// a new object (plaintext re-decodes the document).
func applyOverriders(obj map[string]any, o policy.Overriders) (map[string]any, error) {
	fail := func(kind string, i int, err error) error {
		name := kind
		if i >= 0 {
			name = fmt.Sprintf("%s[%d]", kind, i)
		}
		return &OverrideError{Overrider: name, Err: err}
	}
	for i, io := range o.ImageOverrider {
		if err := applyImageOverrider(obj, io); err != nil {
			return nil, fail("imageOverrider", i, err)
		}
	}
	for i, c := range o.CommandOverrider {
		if err := applyCommandArgsOverrider(obj, "command", c); err != nil {
			return nil, fail("commandOverrider", i, err)
		}
	}
	for i, c := range o.ArgsOverrider {
		if err := applyCommandArgsOverrider(obj, "args", c); err != nil {
			return nil, fail("argsOverrider", i, err)
		}
	}
	for i, l := range o.LabelsOverrider {
		if err := applyLabelAnnotationOverrider(obj, "labels", l); err != nil {
			return nil, fail("labelsOverrider", i, err)
		}
	}
	for i, a := range o.AnnotationsOverrider {
		if err := applyLabelAnnotationOverrider(obj, "annotations", a); err != nil {
			return nil, fail("annotationsOverrider", i, err)
		}
	}
	for i, f := range o.FieldOverrider {
		if err := applyFieldOverrider(obj, f); err != nil {
			return nil, fail("fieldOverrider", i, err)
		}
	}
	if len(o.Plaintext) > 0 {
		doc, err := json.Marshal(obj)
		if err != nil {
			return nil, fail("plaintext", -1, err)
		}
		patched, err := applyPatch(doc, plaintextOps(o.Plaintext))
		if err != nil {
			return nil, fail("plaintext", -1, err)
		}
		out, err := decodeObject(patched)
		if err != nil {
			return nil, fail("plaintext", -1, err)
		}
		obj = out
	}
	return obj, nil
}

// setReplicas sets the replica field (policy.ReplicaField) of the kinds
// Karmada divides; other kinds are left alone.
func setReplicas(obj map[string]any, n int32) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	field := policy.ReplicaField(apiVersion, kind)
	if field == "" {
		return
	}
	spec, err := childMap(obj, "spec", true)
	if err != nil {
		return // a non-object spec is left for the API server to reject
	}
	spec[field] = int64(n)
}

// deepCopy copies a JSON-shaped object through JSON, so that the result has
// only JSON types (map[string]any, []any, string, bool, int64, float64, nil).
func deepCopy(template map[string]any) (map[string]any, error) {
	if template == nil {
		return nil, errors.New("nil template")
	}
	if out, ok := copyJSONMap(template); ok {
		return out, nil
	}
	// A value of a type JSON decoding never produces: take the long way,
	// which also normalises it.
	b, err := json.Marshal(template)
	if err != nil {
		return nil, err
	}
	return decodeObject(b)
}

// copyJSONMap copies a tree of JSON values (map[string]any, []any, string,
// bool, nil, int64, float64) exactly as a JSON round trip through
// decodeObject would, without encoding it: a float64 that such a round trip
// would read back as an integer becomes an int64. It reports false, having
// copied nothing usable, when the tree holds any other type.
func copyJSONMap(m map[string]any) (map[string]any, bool) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		c, ok := copyJSONValue(v)
		if !ok {
			return nil, false
		}
		out[k] = c
	}
	return out, true
}

func copyJSONValue(v any) (any, bool) {
	switch t := v.(type) {
	case nil, string, bool, int64:
		return t, true
	case float64:
		// json.Marshal writes an integral float64 below 1e21 without a
		// fraction or exponent, which decodeObject reads as an int64.
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, false // json.Marshal refuses these
		}
		if t != math.Trunc(t) || math.Abs(t) >= 1e21 {
			return t, true
		}
		if math.Abs(t) < 1<<53 {
			return int64(t), true // exact
		}
		// Above 2^53 json.Marshal prints the shortest digits that read back
		// as t, padded with zeros: read those as decodeObject would.
		if n, err := strconv.ParseInt(strconv.FormatFloat(t, 'f', -1, 64), 10, 64); err == nil {
			return n, true
		}
		return t, true
	case map[string]any:
		return copyJSONMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			c, ok := copyJSONValue(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

// decodeObject decodes a JSON object with integers as int64 (apimachinery's
// convention for unstructured objects).
func decodeObject(b []byte) (map[string]any, error) {
	var out map[string]any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, errors.New("document is not an object")
	}
	return out, nil
}
