package healthd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
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
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, syntaxError(file, err))
			break
		}
		if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
			continue
		}
		r, problems := parseTaintPolicy(file, doc.Content[0], names)
		if len(problems) > 0 {
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

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(file string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &TaintPolicyError{File: file, Line: line, Reason: "syntax: " + m[2]}
	}
	return &TaintPolicyError{File: file, Reason: "syntax: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

// parseTaintPolicy decodes and validates one document.
func parseTaintPolicy(file string, n *yaml.Node, names map[string]int) (TaintRule, []error) {
	lines := map[string]int{}
	index(n, "", lines)
	var errs []error
	problem := func(field, format string, args ...any) {
		errs = append(errs, &TaintPolicyError{File: file, Line: lineOf(lines, field, n.Line), Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if n.Kind != yaml.MappingNode {
		problem("", "want a ClusterTaintPolicy object")
		return TaintRule{}, errs
	}
	unknownFields(n, reflect.TypeFor[ClusterTaintPolicy](), "", func(line int, field string) {
		errs = append(errs, &TaintPolicyError{File: file, Line: line, Field: field, Reason: "unknown field"})
	})
	var raw any
	if err := n.Decode(&raw); err != nil {
		problem("", "%v", err)
		return TaintRule{}, errs
	}
	js, err := json.Marshal(raw)
	if err != nil {
		problem("", "%v", err)
		return TaintRule{}, errs
	}
	var p ClusterTaintPolicy
	if err := json.Unmarshal(js, &p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			problem(te.Field, "want %s, got a %s", kindName(te.Type), te.Value)
		} else {
			problem("", "%v", err)
		}
		return TaintRule{}, errs
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
		names[name] = lineOf(lines, "metadata.name", n.Line)
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

// index records the line of every field path under n: "spec.taints[0].key",
// and also without indices ("spec.taints.key", first occurrence), which is
// how encoding/json names a field in its errors.
func index(n *yaml.Node, path string, lines map[string]int) {
	set := func(p string, line int) {
		if _, ok := lines[p]; !ok {
			lines[p] = line
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := join(path, k.Value)
			set(p, k.Line)
			set(stripIndices(p), k.Line)
			index(v, p, lines)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			set(p, item.Line)
			index(item, p, lines)
		}
	}
}

var indices = regexp.MustCompile(`\[\d+\]`)

func stripIndices(p string) string { return indices.ReplaceAllString(p, "") }

// lineOf is the line of field, or of its closest parent that has one.
func lineOf(lines map[string]int, field string, fallback int) int {
	for p := field; p != ""; {
		if l, ok := lines[p]; ok {
			return l
		}
		if l, ok := lines[stripIndices(p)]; ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return fallback
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// unknownFields reports every mapping key under n that t (by its JSON
// field names) does not have.
func unknownFields(n *yaml.Node, t reflect.Type, path string, report func(line int, field string)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.AliasNode:
		unknownFields(n.Alias, t, path, report)
	case yaml.SequenceNode:
		if t.Kind() == reflect.Slice {
			for i, item := range n.Content {
				unknownFields(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), report)
			}
		}
	case yaml.MappingNode:
		if t.Kind() == reflect.Map {
			for i := 0; i+1 < len(n.Content); i += 2 {
				unknownFields(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value), report)
			}
			return
		}
		if t.Kind() != reflect.Struct {
			return
		}
		fields := jsonFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			ft, ok := fields[k.Value]
			if !ok {
				report(k.Line, join(path, k.Value))
				continue
			}
			unknownFields(n.Content[i+1], ft, join(path, k.Value), report)
		}
	}
}

// jsonFields maps a struct's JSON field names to their types, with
// embedded structs inlined as encoding/json does.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// kindName says what a field of type t is written as in YAML.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "an object"
}

func readyIs(status string) []events.ClusterCondition {
	return []events.ClusterCondition{{Type: policy.ClusterConditionReady, Status: status}}
}
