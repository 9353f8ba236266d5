// Package preferredaffinity scores clusters by the soft cluster preferences
// of seed 004: clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution.
package preferredaffinity

import (
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Name is the plugin name.
const Name = "PreferredClusterAffinity"

// PreferredClusterAffinity adds a term's weight to a cluster's score when
// the term matches: every matchExpressions requirement against the
// cluster's labels and every matchFields requirement against its
// provider/region/zone (the field semantics of a fieldSelector, reference
// §3.1). A term with neither matches nothing, as in Kubernetes. It never
// filters. The preferences are read from the affinity in force:
// placement.clusterAffinity or the observed clusterAffinities term.
type PreferredClusterAffinity struct{}

// New returns the plugin.
func New() PreferredClusterAffinity { return PreferredClusterAffinity{} }

// Name implements framework.Plugin.
func (PreferredClusterAffinity) Name() string { return Name }

type term struct {
	weight int64
	// labels is the matchExpressions as a prepared affinity when every
	// operator is one a label selector has; otherwise exprs is evaluated
	// requirement by requirement (Gt/Lt).
	labels framework.Affinity
	exprs  []corev1.NodeSelectorRequirement
	fields framework.Affinity
}

// Prepare implements framework.PreparePlugin: it parses the terms once.
func (PreferredClusterAffinity) Prepare(req *framework.Request) *framework.Status {
	prefs := preferences(req)
	if len(prefs) == 0 {
		return framework.Skipped()
	}
	terms := make([]term, 0, len(prefs))
	for _, p := range prefs {
		me, mf := p.Preference.MatchExpressions, p.Preference.MatchFields
		if len(me) == 0 && len(mf) == 0 {
			continue
		}
		t := term{weight: int64(p.Weight)}
		if ls, ok := asLabelSelector(me); ok {
			t.labels = framework.CompileAffinity(&policy.ClusterAffinity{LabelSelector: ls})
		} else {
			t.exprs = me
		}
		if len(mf) > 0 {
			t.fields = framework.CompileAffinity(&policy.ClusterAffinity{FieldSelector: &policy.FieldSelector{MatchExpressions: mf}})
		}
		terms = append(terms, t)
	}
	if len(terms) == 0 {
		return framework.Skipped()
	}
	req.SetState(Name, terms)
	return nil
}

// Score implements framework.ScorePlugin.
func (PreferredClusterAffinity) Score(req *framework.Request, c *framework.ClusterInfo) (int64, *framework.Status) {
	terms, _ := req.State(Name).([]term)
	var score int64
	for i := range terms {
		t := &terms[i]
		if !t.labels.Matches(c) || !t.fields.Matches(c) {
			continue
		}
		if !exprsMatch(t.exprs, c.Labels) {
			continue
		}
		score += t.weight
	}
	return score, nil
}

func preferences(req *framework.Request) []policy.PreferredClusterTerm {
	pl := req.Placement
	if pl.ClusterAffinity != nil {
		return pl.ClusterAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	for i := range pl.ClusterAffinities {
		if pl.ClusterAffinities[i].AffinityName == req.AffinityName {
			return pl.ClusterAffinities[i].PreferredDuringSchedulingIgnoredDuringExecution
		}
	}
	return nil
}

func exprsMatch(exprs []corev1.NodeSelectorRequirement, lbls map[string]string) bool {
	for _, r := range exprs {
		if !policy.NodeRequirementMatches(r, labels.Set(lbls)) {
			return false
		}
	}
	return true
}

// asLabelSelector expresses node-selector requirements as a label selector
// when they only use In/NotIn/Exists/DoesNotExist, which mean the same in
// both; the selector is then parsed once per request.
func asLabelSelector(reqs []corev1.NodeSelectorRequirement) (*metav1.LabelSelector, bool) {
	if len(reqs) == 0 {
		return nil, true
	}
	ls := &metav1.LabelSelector{MatchExpressions: make([]metav1.LabelSelectorRequirement, 0, len(reqs))}
	for _, r := range reqs {
		// The operators label selectors share with node selectors are
		// spelled the same, so the conversion is a change of type.
		if _, ok := policy.SelectionOperator(string(r.Operator), false); !ok {
			return nil, false
		}
		ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values})
	}
	return ls, true
}
