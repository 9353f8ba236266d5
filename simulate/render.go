package simulate

// The render fast path: render.Render once per distinct set of matching
// override rules (and replica count when an override may touch it), not
// once per cluster. TestSharedRenderMatchesRender holds it equal to
// render.Render on every cluster; docs/performance.md has its figure.

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/executord/render"
)

// renderAll renders the manifest of every target cluster, as executord does:
// replicas set when the binding is a workload, the binding's overrides
// applied. A manifest depends on the cluster only through the override
// rules whose targetCluster matches it (Render sees nothing else of it) and
// through the replica count, so render.Render runs once per distinct set
// of matching rules: clusters with the same set and other replica counts
// get a copy of that manifest with the replica field set, which is what
// Render gives them as long as no override rule touches the replica field
// (Render sets it before the overrides). When one may, every replica count
// is rendered on its own. Manifests may share unchanged subtrees: the
// output is read-only.
func (w *world) renderAll(tpl map[string]any, b *events.Binding, c *claim, res *Result) {
	if in := b.Interpretation; in != nil && in.ReplicaRevision != "" && b.IsWorkload() {
		w.renderRevised(tpl, b, res)
		return
	}
	type rendered struct {
		obj      map[string]any
		applied  []string
		err      error
		replicas *int32
	}
	var memo map[string]rendered
	var sig []byte
	names := c.names()
	field := ""
	if b.Replicas > 0 {
		field = policy.ReplicaField(b.APIVersion, b.Key.Kind)
	}
	perReplicas := field != "" && c.touch(field)
	for _, tc := range res.Clusters {
		rc := w.clusters.renderCluster(tc.Name)
		var rp *int32
		if b.Replicas > 0 {
			r := tc.Replicas
			rp = &r
		}
		sig = sig[:0]
		if perReplicas {
			sig = strconv.AppendInt(sig, int64(*rp), 10)
		}
		ci, known := w.clusters.index[tc.Name]
		start := len(sig)
		for i := range b.Overrides {
			sig = append(sig, '|')
			if bits, ok := w.ruleMatches[names[i]]; ok && known {
				sig = append(sig, bits[ci]...)
			} else {
				sig = appendRuleBits(sig, &b.Overrides[i], w.clusters.facts(tc.Name, rc))
			}
		}
		r, ok := memo[string(sig)]
		if !ok {
			r.obj, r.applied, r.err = renderMatching(tpl, rc, c.matching(sig[start:]), rp)
			r.replicas = rp
			if r.applied == nil {
				r.applied = []string{}
			}
			if memo == nil {
				memo = make(map[string]rendered, len(res.Clusters))
			}
			memo[string(sig)] = r
		}
		if r.err != nil {
			if res.RenderErrors == nil {
				res.RenderErrors = map[string]string{}
			}
			res.RenderErrors[tc.Name] = r.err.Error()
			res.Warnings = append(res.Warnings, "cluster "+tc.Name+": "+r.err.Error())
			continue
		}
		obj := r.obj
		if field != "" && *r.replicas != *rp {
			obj = withReplicas(obj, field, *rp)
		}
		res.Manifests[tc.Name] = obj
		res.Overrides[tc.Name] = r.applied
	}
}

// renderMatching is render.Render given only the override rules that
// target the cluster (m, from matchingOverrides). Render skips the others
// anyway; leaving them out saves evaluating their cluster selectors once
// more. The rule index of an override error is mapped back to the
// policy's own.
func renderMatching(tpl map[string]any, rc render.Cluster, m *matching, rp *int32) (map[string]any, []string, error) {
	obj, applied, err := render.Render(tpl, rc, m.pols, rp)
	var oe *render.OverrideError
	if err != nil && errors.As(err, &oe) {
		if kept, ok := m.ruleIndex[oe.Policy]; ok && oe.Rule >= 0 && oe.Rule < len(kept) {
			oe.Rule = kept[oe.Rule]
		}
	}
	return obj, applied, err
}

// matching is the override policies to render with for one set of
// matching rules; shared and read-only.
type matching struct {
	pols      []policy.OverridePolicy
	ruleIndex map[string][]int // policy -> kept rule -> original index
}

// matchingOverrides keeps of overrides the rules that bits mark (per
// policy '|' then one '0'/'1' per rule, as appendRuleBits writes them). A
// policy none of whose rules match is left out (it contributes nothing).
func matchingOverrides(overrides []policy.OverridePolicy, names []string, bits []byte) *matching {
	m := &matching{pols: make([]policy.OverridePolicy, 0, len(overrides))}
	for i := range overrides {
		p := &overrides[i]
		rules, deprecated := p.Rules()
		bits = bits[1:] // '|'
		mine := bits[:len(rules)]
		bits = bits[len(rules):]
		if !slices.Contains(mine, '1') {
			continue
		}
		if deprecated || !slices.Contains(mine, '0') {
			m.pols = append(m.pols, *p)
			continue
		}
		q := *p
		q.Spec.OverrideRules = make([]policy.RuleWithCluster, 0, len(mine))
		kept := make([]int, 0, len(mine))
		for ri, b := range mine {
			if b == '1' {
				q.Spec.OverrideRules = append(q.Spec.OverrideRules, rules[ri])
				kept = append(kept, ri)
			}
		}
		if m.ruleIndex == nil {
			m.ruleIndex = map[string][]int{}
		}
		m.ruleIndex[names[i]] = kept
		m.pols = append(m.pols, q)
	}
	return m
}

// withReplicas returns obj with spec.<field> set: a copy of the top level
// and of spec, the rest shared. A spec that is not an object is left alone,
// as Render leaves it.
func withReplicas(obj map[string]any, field string, n int32) map[string]any {
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return obj
	}
	out := maps.Clone(obj)
	spec = maps.Clone(spec)
	spec[field] = int64(n)
	out["spec"] = spec
	return out
}

// touches reports whether any rule of p may read or write spec.<field>:
// a path (plaintext, fieldOverrider, imageOverrider predicate) that is
// spec.<field>, inside it or one of its ancestors. Paths with JSON-pointer
// escapes count as touching (conservative).
func touches(p *policy.OverridePolicy, field string) bool {
	target := []string{"spec", field}
	hit := func(path string) bool {
		if strings.Contains(path, "~") {
			return true
		}
		var segs []string
		for _, s := range strings.Split(path, "/") {
			if s != "" {
				segs = append(segs, s)
			}
		}
		n := min(len(segs), len(target))
		return slices.Equal(segs[:n], target[:n])
	}
	rules, _ := p.Rules()
	for _, r := range rules {
		o := &r.Overriders
		for _, x := range o.Plaintext {
			if hit(x.Path) {
				return true
			}
		}
		for _, x := range o.FieldOverrider {
			if hit(x.FieldPath) {
				return true
			}
		}
		for _, x := range o.ImageOverrider {
			if x.Predicate != nil && hit(x.Predicate.Path) {
				return true
			}
		}
	}
	return false
}

// appendRuleBits appends one bit per rule of p (policy's Rules, which
// Render applies): does its targetCluster match the cluster.
func appendRuleBits(buf []byte, p *policy.OverridePolicy, facts policy.ClusterFacts) []byte {
	rules, _ := p.Rules()
	for _, r := range rules {
		buf = appendBit(buf, r.TargetCluster.Matches(facts))
	}
	return buf
}

func appendBit(buf []byte, b bool) []byte {
	if b {
		return append(buf, '1')
	}
	return append(buf, '0')
}

// renderRevised renders every target cluster of a template whose kind has
// a replicaRevision script, as executord does: the script revises the
// template with the cluster's count, then render.Render applies the
// overrides. No manifest is shared: each cluster's revision is its own.
func (w *world) renderRevised(tpl map[string]any, b *events.Binding, res *Result) {
	fail := func(cluster string, err error) {
		if res.RenderErrors == nil {
			res.RenderErrors = map[string]string{}
		}
		res.RenderErrors[cluster] = err.Error()
		res.Warnings = append(res.Warnings, "cluster "+cluster+": "+err.Error())
	}
	for _, tc := range res.Clusters {
		revised, err := render.Revise(b.Interpretation, tpl, tc.Replicas)
		if err != nil {
			fail(tc.Name, err)
			continue
		}
		r := tc.Replicas
		obj, applied, err := render.Render(revised, w.clusters.renderCluster(tc.Name), b.Overrides, &r)
		if err != nil {
			fail(tc.Name, err)
			continue
		}
		if applied == nil {
			applied = []string{}
		}
		res.Manifests[tc.Name] = obj
		res.Overrides[tc.Name] = applied
	}
}
