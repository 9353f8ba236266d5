package framework

import (
	"github.com/flotilla-io/flotilla/events/policy"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Affinity is a policy.ClusterAffinity prepared for matching many clusters:
// the label selector is parsed once instead of once per cluster. Matching
// itself is policy.ClusterAffinity.Matches; the zero value and the result of
// CompileAffinity(nil) match every cluster.
type Affinity struct {
	rest  policy.ClusterAffinity // the affinity without its label selector
	sel   labels.Selector        // nil: no label selector
	never bool                   // the label selector is invalid: nothing matches (reference §3.1)
	bare  bool                   // rest is empty: only the label selector counts
}

// CompileAffinity prepares a for matching. nil matches every cluster.
func CompileAffinity(a *policy.ClusterAffinity) Affinity {
	if a == nil {
		return Affinity{}
	}
	m := Affinity{rest: *a}
	m.rest.LabelSelector = nil
	m.rest.PreferredDuringSchedulingIgnoredDuringExecution = nil
	m.bare = len(a.ClusterNames) == 0 && len(a.ExcludeClusters) == 0 && a.FieldSelector == nil
	if a.LabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(a.LabelSelector)
		if err != nil {
			m.never = true
		} else {
			m.sel = sel
		}
	}
	return m
}

// Matches reports whether the cluster satisfies the affinity (reference §3.1).
// All criteria are ANDed, so checking the pre-parsed label selector apart
// from the rest gives the same answer as Matches on the whole affinity.
func (m *Affinity) Matches(c *ClusterInfo) bool {
	if m.never {
		return false
	}
	if m.sel != nil && !m.sel.Matches(labels.Set(c.Labels)) {
		return false
	}
	if m.bare {
		return true
	}
	return m.rest.Matches(c.Facts())
}
