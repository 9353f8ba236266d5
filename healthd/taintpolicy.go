package healthd

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/internal/strictyaml"
)

// ClusterTaintPolicy is Karmada's policy.karmada.io/v1alpha1
// ClusterTaintPolicy as --taint-policy reads it, plus one Flotilla field,
// spec.addAfterSeconds.
type ClusterTaintPolicy struct {
	APIVersion string                 `json:"apiVersion"`
	Kind       string                 `json:"kind"`
	Metadata   metav1.ObjectMeta      `json:"metadata"`
	Spec       ClusterTaintPolicySpec `json:"spec"`
}

// ClusterTaintPolicySpec is the policy's spec.
type ClusterTaintPolicySpec struct {
	// TargetClusters: the clusters the policy applies to (nil: all).
	TargetClusters     *policy.ClusterAffinity `json:"targetClusters,omitempty"`
	AddOnConditions    []MatchCondition        `json:"addOnConditions,omitempty"`
	RemoveOnConditions []MatchCondition        `json:"removeOnConditions,omitempty"`
	Taints             []PolicyTaint           `json:"taints"`
	// AddAfterSeconds is Flotilla's extension: how long the
	// addOnConditions must have held, without a break, before the taints
	// are added. Absent or 0: at once, as in Karmada.
	AddAfterSeconds *int64 `json:"addAfterSeconds,omitempty"`
}

// PolicyTaint is a taint a policy manages.
type PolicyTaint struct {
	Key    string             `json:"key"`
	Value  string             `json:"value,omitempty"`
	Effect corev1.TaintEffect `json:"effect"`
}

// TaintPolicyError is one problem in a --taint-policy file.
type TaintPolicyError struct {
	File   string
	Line   int    // 1-based; 0 when unknown
	Field  string // path, e.g. spec.addOnConditions[0].operator
	Reason string
}

func (e *TaintPolicyError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	return b.String() + ": " + e.Reason
}

// Karmada's API group and kind of the policy.
const (
	taintPolicyAPIVersion = "policy.karmada.io/v1alpha1"
	taintPolicyKind       = "ClusterTaintPolicy"
)

// LoadTaintPolicies reads one or more ClusterTaintPolicy documents from
// file and returns them as rules, in file order (Karmada orders by
// creation time; a file's order is the one its author sees). It returns
// every problem, each a *TaintPolicyError naming the file, the line and the
// field.
func LoadTaintPolicies(file string) ([]TaintRule, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &TaintPolicyError{File: file, Reason: err.Error()}
	}
	return ParseTaintPolicies(file, data)
}

// ParseTaintPolicies is LoadTaintPolicies on data read from file.
func ParseTaintPolicies(file string, data []byte) ([]TaintRule, error) {
	var rules []TaintRule
	var errs []error
	names := map[string]int{}
	for i, doc := range strictyaml.Parse(file, data) {
		errs = append(errs, taintPolicyErrors(doc.Problems)...)
		if doc.Root == nil {
			continue
		}
		r, problems := parseTaintPolicy(file, i+1, doc.Root, names)
		if len(problems) > 0 || len(doc.Problems) > 0 {
			errs = append(errs, problems...)
			continue
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 && len(errs) == 0 {
		errs = append(errs, &TaintPolicyError{File: file, Reason: "no ClusterTaintPolicy in the file (to switch NoExecute taints off, use --no-execute-after 0 instead)"})
	}
	return rules, errors.Join(errs...)
}

func taintPolicyErrors(ps []events.FieldError) []error {
	out := make([]error, len(ps))
	for i, p := range ps {
		out[i] = &TaintPolicyError{File: p.File, Line: p.Line, Field: p.Field, Reason: p.Reason}
	}
	return out
}

// parseTaintPolicy decodes and validates one document.
func parseTaintPolicy(file string, document int, root *strictyaml.Node, names map[string]int) (TaintRule, []error) {
	if root.Kind() != strictyaml.Map {
		return TaintRule{}, []error{&TaintPolicyError{File: file, Line: root.Line(), Reason: "want a ClusterTaintPolicy object"}}
	}
	var p ClusterTaintPolicy
	lines, decoded := strictyaml.Decode(file, document, root, &p)
	errs := taintPolicyErrors(decoded)
	problem := func(field, format string, args ...any) {
		errs = append(errs, &TaintPolicyError{File: file, Line: lines.Line(field), Field: field, Reason: fmt.Sprintf(format, args...)})
	}

	if p.APIVersion != taintPolicyAPIVersion {
		problem("apiVersion", "want %s, got %q", taintPolicyAPIVersion, p.APIVersion)
	}
	if p.Kind != taintPolicyKind {
		problem("kind", "want %s, got %q", taintPolicyKind, p.Kind)
	}
	name := p.Metadata.Name
	switch prev, dup := names[name]; {
	case name == "":
		problem("metadata.name", "required")
	case dup:
		problem("metadata.name", "%q is defined twice (first at line %d)", name, prev)
	default:
		names[name] = lines.Line("metadata.name")
	}
	s := p.Spec
	if t := s.TargetClusters; t != nil {
		if len(t.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			problem("spec.targetClusters.preferredDuringSchedulingIgnoredDuringExecution", "not allowed: a taint policy selects clusters, it does not prefer them")
		}
		if t.LabelSelector != nil {
			if _, err := metav1.LabelSelectorAsSelector(t.LabelSelector); err != nil {
				problem("spec.targetClusters.labelSelector", "%v", err)
			}
		}
		if t.FieldSelector != nil {
			for i, e := range t.FieldSelector.MatchExpressions {
				if !slices.Contains([]string{"provider", "region", "zone"}, e.Key) {
					problem(fmt.Sprintf("spec.targetClusters.fieldSelector.matchExpressions[%d].key", i), "want provider, region or zone, got %q", e.Key)
				}
			}
		}
	}
	conditions := func(field string, cs []MatchCondition, why string) {
		if len(cs) == 0 {
			problem(field, "must list at least one condition: %s", why)
		}
		for i, c := range cs {
			at := fmt.Sprintf("%s[%d]", field, i)
			if c.ConditionType != policy.ClusterConditionReady {
				problem(at+".conditionType", "want Ready (the one condition healthd reports), got %q", c.ConditionType)
			}
			if c.Operator != OperatorIn && c.Operator != OperatorNotIn {
				problem(at+".operator", "want In or NotIn, got %q", c.Operator)
			}
			if len(c.StatusValues) == 0 {
				problem(at+".statusValues", "must list at least one of True, False, Unknown")
			}
			for j, v := range c.StatusValues {
				if v != "True" && v != "False" && v != "Unknown" {
					problem(fmt.Sprintf("%s.statusValues[%d]", at, j), "want True, False or Unknown, got %q", v)
				}
			}
		}
	}
	conditions("spec.addOnConditions", s.AddOnConditions, "without one the policy never adds its taints")
	conditions("spec.removeOnConditions", s.RemoveOnConditions, "without one its taints would stay even after the cluster is Ready again")
	if len(errs) == 0 {
		for _, status := range []string{"True", "False", "Unknown"} {
			c := readyIs(status)
			if matches(c, s.AddOnConditions) && matches(c, s.RemoveOnConditions) {
				problem("spec.removeOnConditions", "holds together with addOnConditions when Ready is %s: the taints would be removed as soon as they are added", status)
			}
		}
	}
	if len(s.Taints) == 0 {
		problem("spec.taints", "must list at least one taint")
	}
	var taints []corev1.Taint
	for i, t := range s.Taints {
		at := fmt.Sprintf("spec.taints[%d]", i)
		for _, msg := range validation.IsQualifiedName(t.Key) {
			problem(at+".key", "%s", msg)
		}
		if t.Value != "" {
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				problem(at+".value", "%s", msg)
			}
		}
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			problem(at+".effect", "want NoSchedule or NoExecute, got %q", t.Effect)
		}
		tt := corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
		if controllerTaint(tt) {
			problem(at, "healthd sets %s:NoSchedule itself, from the cluster's state; a policy may add it with effect NoExecute", t.Key)
		}
		if slices.ContainsFunc(taints, func(o corev1.Taint) bool { return o.MatchTaint(&tt) }) {
			problem(at, "%s:%s is listed twice", t.Key, t.Effect)
		}
		taints = append(taints, tt)
	}
	var after time.Duration
	if s.AddAfterSeconds != nil {
		if *s.AddAfterSeconds < 0 {
			problem("spec.addAfterSeconds", "must not be negative")
		}
		after = time.Duration(*s.AddAfterSeconds) * time.Second
	}
	if len(errs) > 0 {
		return TaintRule{}, errs
	}
	return TaintRule{Name: name, Targets: s.TargetClusters, AddOn: s.AddOnConditions, RemoveOn: s.RemoveOnConditions, Taints: taints, AddAfter: after}, nil
}

func readyIs(status string) []events.ClusterCondition {
	return []events.ClusterCondition{{Type: policy.ClusterConditionReady, Status: status}}
}
