package policy

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// ClusterFacts is what cluster selectors look at: name, labels and the
// provider/region/zones fields of the Cluster spec.
type ClusterFacts struct {
	Name     string
	Labels   map[string]string
	Provider string
	Region   string
	Zones    []string
}

// FactsOf extracts the selector-relevant facts of a Cluster spec. The
// deprecated single `zone` counts as a one-element zones list.
func FactsOf(name string, lbls map[string]string, spec ClusterSpec) ClusterFacts {
	zones := spec.Zones
	if len(zones) == 0 && spec.Zone != "" {
		zones = []string{spec.Zone}
	}
	return ClusterFacts{Name: name, Labels: lbls, Provider: spec.Provider, Region: spec.Region, Zones: zones}
}

// Matches reports whether the cluster satisfies the affinity, as Karmada's
// ClusterMatches (reference §3.1): exclude wins, then labelSelector,
// fieldSelector and clusterNames are ANDed; an empty affinity matches all;
// an invalid selector matches nothing. Soft preferences never filter.
func (a *ClusterAffinity) Matches(c ClusterFacts) bool {
	if a == nil {
		return true
	}
	if slices.Contains(a.ExcludeClusters, c.Name) {
		return false
	}
	if a.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(a.LabelSelector)
		if err != nil || !sel.Matches(labels.Set(c.Labels)) {
			return false
		}
	}
	if a.FieldSelector != nil {
		for _, req := range a.FieldSelector.MatchExpressions {
			if !fieldMatches(req, c) {
				return false
			}
		}
	}
	if len(a.ClusterNames) > 0 && !slices.Contains(a.ClusterNames, c.Name) {
		return false
	}
	return true
}

func fieldMatches(req corev1.NodeSelectorRequirement, c ClusterFacts) bool {
	if req.Key == "zone" {
		switch req.Operator {
		case corev1.NodeSelectorOpIn:
			for _, z := range c.Zones {
				if slices.Contains(req.Values, z) {
					return true
				}
			}
			return false
		case corev1.NodeSelectorOpNotIn:
			for _, z := range c.Zones {
				if slices.Contains(req.Values, z) {
					return false
				}
			}
			return true
		case corev1.NodeSelectorOpExists:
			return len(c.Zones) > 0
		case corev1.NodeSelectorOpDoesNotExist:
			return len(c.Zones) == 0
		}
		return false
	}
	fields := labels.Set{}
	if c.Provider != "" {
		fields["provider"] = c.Provider
	}
	if c.Region != "" {
		fields["region"] = c.Region
	}
	return NodeRequirementMatches(req, fields)
}

// NodeRequirementMatches evaluates a node-selector requirement against a
// label set, as Kubernetes does; an invalid requirement matches nothing.
func NodeRequirementMatches(req corev1.NodeSelectorRequirement, set labels.Set) bool {
	op, ok := SelectionOperator(string(req.Operator), true)
	if !ok {
		return false
	}
	r, err := labels.NewRequirement(req.Key, op, req.Values)
	if err != nil {
		return false
	}
	return r.Matches(set)
}

// SelectionOperator returns the operator a label-selector or node-selector
// operator stands for. In, NotIn, Exists and DoesNotExist are spelled the
// same in metav1.LabelSelectorOperator and corev1.NodeSelectorOperator and
// mean the same in both; Gt and Lt exist only in node selectors, so they
// are accepted only when numeric is true. Anything else gives "", false.
func SelectionOperator(op string, numeric bool) (selection.Operator, bool) {
	switch op {
	case string(corev1.NodeSelectorOpIn):
		return selection.In, true
	case string(corev1.NodeSelectorOpNotIn):
		return selection.NotIn, true
	case string(corev1.NodeSelectorOpExists):
		return selection.Exists, true
	case string(corev1.NodeSelectorOpDoesNotExist):
		return selection.DoesNotExist, true
	case string(corev1.NodeSelectorOpGt):
		if numeric {
			return selection.GreaterThan, true
		}
	case string(corev1.NodeSelectorOpLt):
		if numeric {
			return selection.LessThan, true
		}
	}
	return "", false
}

// SelectorPriority ranks how specifically a resource selector matches a
// resource (reference §5.1.1): mismatch < match-all < label selector < name.
type SelectorPriority int

// Selector priorities.
const (
	PriorityMisMatch SelectorPriority = iota
	PriorityMatchAll
	PriorityMatchLabelSelector
	PriorityMatchName
)

// ResourceFacts is what resource selectors look at.
type ResourceFacts struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	Labels     map[string]string
}

// Priority returns how the selector matches the resource.
func (s ResourceSelector) Priority(r ResourceFacts) SelectorPriority {
	if s.APIVersion != r.APIVersion || s.Kind != r.Kind {
		return PriorityMisMatch
	}
	if s.Namespace != "" && s.Namespace != r.Namespace {
		return PriorityMisMatch
	}
	if s.Name != "" {
		if s.Name == r.Name {
			return PriorityMatchName
		}
		return PriorityMisMatch
	}
	if s.LabelSelector == nil {
		return PriorityMatchAll
	}
	sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector)
	if err != nil || !sel.Matches(labels.Set(r.Labels)) {
		return PriorityMisMatch
	}
	return PriorityMatchLabelSelector
}

// SelectorsPriority is the maximum priority over selectors (the implicit
// priority of a policy for a resource).
func SelectorsPriority(sels []ResourceSelector, r ResourceFacts) SelectorPriority {
	best := PriorityMisMatch
	for _, s := range sels {
		if p := s.Priority(r); p > best {
			best = p
		}
	}
	return best
}

// ResourceFactsOf reads what resource selectors look at from a decoded
// object: apiVersion, kind, metadata.namespace, metadata.name and the
// string-valued metadata.labels (nil when there are none).
func ResourceFactsOf(obj map[string]any) ResourceFacts {
	r := ResourceFacts{}
	r.APIVersion, _ = obj["apiVersion"].(string)
	r.Kind, _ = obj["kind"].(string)
	if meta, ok := obj["metadata"].(map[string]any); ok {
		r.Namespace, _ = meta["namespace"].(string)
		r.Name, _ = meta["name"].(string)
		if lbls, ok := meta["labels"].(map[string]any); ok {
			r.Labels = make(map[string]string, len(lbls))
			for k, v := range lbls {
				if s, ok := v.(string); ok {
					r.Labels[k] = s
				}
			}
		}
	}
	return r
}
