package framework

import (
	"slices"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/events/policy"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Affinity is a policy.ClusterAffinity prepared for matching many clusters:
// the label selector is parsed and validated once instead of once per
// cluster. Matching itself is policy.ClusterAffinity.Matches; the zero
// value and the result of CompileAffinity(nil) match every cluster.
type Affinity struct {
	rest  policy.ClusterAffinity // the affinity without its label selector
	reqs  []labelRequirement     // the label selector, when fast is set
	sel   labels.Selector        // the label selector when not fast; nil: none
	fast  bool                   // reqs is the label selector
	never bool                   // the label selector is invalid: nothing matches (reference §3.1)
	bare  bool                   // rest is empty: only the label selector counts

	// Set by Snapshot.Bind: hits[i] says whether snap's cluster i
	// matches.
	fam  *family
	hits []bool
}

// labelRequirement is one requirement of a label selector, matched
// directly against the label map: labels.Selector.Matches goes through an
// interface per requirement and a set lookup per value, which showed in
// profiles as the filter's main cost.
type labelRequirement struct {
	key    string
	op     selection.Operator
	value  string   // the only value, when values is nil
	values []string // sorted and without duplicates, when there are two or more
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
		m.reqs, m.fast = compileSelector(a.LabelSelector)
		if !m.fast {
			// Invalid, or a case compileSelector leaves to apimachinery.
			sel, err := metav1.LabelSelectorAsSelector(a.LabelSelector)
			if err != nil {
				m.never = true
			} else {
				m.sel = sel
			}
		}
	}
	return m
}

// compileSelector is metav1.LabelSelectorAsSelector without building a
// labels.Selector: the same validation (labels.NewRequirement's: label
// keys and values, value counts per operator) and the same requirements,
// at a fraction of the allocations, which showed in profiles since every
// decision compiles its selectors. ok is false when the selector is
// invalid; CompileAffinity then lets apimachinery decide.
func compileSelector(ls *metav1.LabelSelector) ([]labelRequirement, bool) {
	n := len(ls.MatchLabels) + len(ls.MatchExpressions)
	if n == 0 {
		return nil, true // labels.Everything()
	}
	out := make([]labelRequirement, 0, n)
	for k, v := range ls.MatchLabels {
		if !validLabelKey(k) || !validLabelValue(v) {
			return nil, false
		}
		out = append(out, labelRequirement{key: k, op: selection.Equals, value: v})
	}
	if len(out) > 1 {
		// In key order rather than the map's: the same selector always
		// compiles to the same requirements (see appendKey).
		slices.SortFunc(out, func(a, b labelRequirement) int { return strings.Compare(a.key, b.key) })
	}
	for _, e := range ls.MatchExpressions {
		op, ok := policy.SelectionOperator(string(e.Operator), false)
		if !ok {
			return nil, false
		}
		switch op {
		case selection.In, selection.NotIn:
			if len(e.Values) == 0 {
				return nil, false
			}
		default:
			if len(e.Values) != 0 {
				return nil, false
			}
		}
		if !validLabelKey(e.Key) {
			return nil, false
		}
		for _, v := range e.Values {
			if !validLabelValue(v) {
				return nil, false
			}
		}
		r := labelRequirement{key: e.Key, op: op}
		switch {
		case len(e.Values) == 1:
			r.value = e.Values[0]
		case len(e.Values) > 1:
			vs := slices.Clone(e.Values)
			slices.Sort(vs)
			r.values = slices.Compact(vs)
		}
		out = append(out, r)
	}
	return out, true
}

// validLabelKey is content.IsLabelKey reporting no error: the common
// case, a short name of letters, digits, '-', '_' and '.' starting and
// ending with a letter or digit, is decided here without the regular
// expression and the allocations; anything else (a prefix, an odd
// character) is left to apimachinery.
func validLabelKey(k string) bool {
	return simpleLabelName(k) || len(content.IsLabelKey(k)) == 0
}

// validLabelValue is validation.IsValidLabelValue reporting no error, with
// the same shortcut as validLabelKey ("" is a valid value).
func validLabelValue(v string) bool {
	return v == "" || simpleLabelName(v) || len(validation.IsValidLabelValue(v)) == 0
}

// simpleLabelName reports whether s matches apimachinery's label name
// pattern ([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?) within its 63
// characters: such a string is a valid label key (without a prefix) and a
// valid label value. false means "not decided here", not "invalid".
func simpleLabelName(s string) bool {
	if len(s) == 0 || len(s) > 63 || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// matches has labels.Requirement.Matches' semantics for the operators
// compileSelector produces.
func (r *labelRequirement) matches(ls map[string]string) bool {
	v, has := ls[r.key]
	switch r.op {
	case selection.In, selection.Equals, selection.DoubleEquals:
		return has && r.hasValue(v)
	case selection.NotIn, selection.NotEquals:
		return !has || !r.hasValue(v)
	case selection.Exists:
		return has
	case selection.DoesNotExist:
		return !has
	}
	return false
}

func (r *labelRequirement) hasValue(v string) bool {
	if r.values == nil {
		return r.value == v
	}
	_, found := slices.BinarySearch(r.values, v)
	return found
}

// Matches reports whether the cluster satisfies the affinity (reference §3.1).
// All criteria are ANDed, so checking the pre-parsed label selector apart
// from the rest gives the same answer as Matches on the whole affinity.
func (m *Affinity) Matches(c *ClusterInfo) bool {
	if d := c.derived; d != nil && d.fam == m.fam {
		return m.hits[d.index]
	}
	return m.match(c)
}

// Hits returns, when view is a Snapshot's View and the affinity is bound
// to that snapshot (Snapshot.Bind), what Matches answers for each of its
// clusters, to test many clusters without a call each; nil otherwise.
// The slice is shared: read it, do not modify it.
func (m *Affinity) Hits(view []*ClusterInfo) []bool {
	if m.fam == nil || len(view) != len(m.hits) || len(view) == 0 {
		return nil
	}
	for i, c := range view {
		if d := c.derived; d == nil || d.fam != m.fam || d.index != i {
			return nil
		}
	}
	return m.hits
}

// match is Matches without the snapshot's answers.
func (m *Affinity) match(c *ClusterInfo) bool {
	if m.never {
		return false
	}
	if m.fast {
		for i := range m.reqs {
			if !m.reqs[i].matches(c.Labels) {
				return false
			}
		}
	} else if m.sel != nil && !m.sel.Matches(labels.Set(c.Labels)) {
		return false
	}
	if m.bare {
		return true
	}
	return m.rest.Matches(c.Facts())
}

// appendKey appends a string that identifies what the affinity matches:
// two affinities with the same key match the same clusters. (Affinities
// that match alike may still have different keys: the key follows the
// order of expressions and names as written.)
func (m *Affinity) appendKey(b []byte) []byte {
	str := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	strs := func(tag byte, ss []string) {
		b = append(b, tag)
		b = strconv.AppendInt(b, int64(len(ss)), 10)
		for _, s := range ss {
			str(s)
		}
	}
	switch {
	case m.fast:
		b = append(b, 'L')
		b = strconv.AppendInt(b, int64(len(m.reqs)), 10)
		for i := range m.reqs {
			r := &m.reqs[i]
			str(r.key)
			str(string(r.op))
			if r.values == nil {
				strs('v', []string{r.value})
			} else {
				strs('V', r.values)
			}
		}
	case m.sel != nil:
		b = append(b, 'S')
		str(m.sel.String())
	}
	if fs := m.rest.FieldSelector; fs != nil {
		b = append(b, 'F')
		b = strconv.AppendInt(b, int64(len(fs.MatchExpressions)), 10)
		for _, e := range fs.MatchExpressions {
			str(e.Key)
			str(string(e.Operator))
			strs('v', e.Values)
		}
	}
	strs('N', m.rest.ClusterNames)
	strs('X', m.rest.ExcludeClusters)
	return b
}
