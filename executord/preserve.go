package executord

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Failover statePreservation (Karmada's StatefulFailoverInjection) has two
// halves in executord, both pure:
//
//   - PreservedState reads the policy's rules against the member object's
//     status each time its status is published (WorkStatus.PreservedState);
//     schedulerd copies the evicted cluster's last values into the eviction.
//   - InjectPreservedLabels adds those values as labels to the copies that
//     the placement puts in clusters that did not run the template before
//     the failover.

// preservationRules are the statePreservation rules of b's policy: those of
// failover.application, then those of failover.cluster; on an alias both
// (or one list twice) name, the first rule wins. spec.failover is read,
// and for each behaviour whose statePreservation it lacks,
// spec.placement.failover (seed 002's place, which policyd merges into
// spec.failover). Nil when there are none.
func preservationRules(b *events.Binding) []policy.StatePreservationRule {
	if b == nil || b.Spec == nil {
		return nil
	}
	fos := []*policy.FailoverBehavior{b.Spec.Failover, b.Spec.Placement.Failover}
	var app, cluster *policy.StatePreservation
	for _, fo := range fos {
		if fo == nil {
			continue
		}
		if app == nil && fo.Application != nil {
			app = fo.Application.StatePreservation
		}
		if cluster == nil && fo.Cluster != nil {
			cluster = fo.Cluster.StatePreservation
		}
	}
	var rules []policy.StatePreservationRule
	seen := map[string]bool{}
	for _, sp := range []*policy.StatePreservation{app, cluster} {
		if sp == nil {
			continue
		}
		for _, r := range sp.Rules {
			if seen[r.AliasLabelName] {
				continue
			}
			seen[r.AliasLabelName] = true
			rules = append(rules, r)
		}
	}
	return rules
}

// RuleError is a statePreservation rule whose jsonPath does not parse.
type RuleError struct {
	Rule policy.StatePreservationRule
	Err  error
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("statePreservation rule %s: jsonPath %q: %v", e.Rule.AliasLabelName, e.Rule.JSONPath, e.Err)
}

func (e *RuleError) Unwrap() error { return e.Err }

// PreservedState evaluates each rule's jsonPath against obj's .status (the
// path is relative to status, as in Karmada: "{ .updateRevision }"; a path
// without the surrounding braces, ".updateRevision" or "updateRevision", is
// read as that) and returns alias ->
// value in the path's text form (a number as 3, a string as it is). A path
// that yields nothing (a missing field, an empty string, no status at all)
// leaves its alias out; so does a path that does not parse, which is also
// returned in bad. Nil when no rule yields a value. Pure.
func PreservedState(obj *unstructured.Unstructured, rules []policy.StatePreservationRule) (state map[string]string, bad []*RuleError) {
	if len(rules) == 0 {
		return nil, nil
	}
	var status any = map[string]any{}
	if obj != nil {
		if s, ok := obj.Object["status"].(map[string]any); ok {
			status = s
		}
	}
	for _, r := range rules {
		v, err := evalPath(status, r.JSONPath)
		if err != nil {
			bad = append(bad, &RuleError{Rule: r, Err: err})
			continue
		}
		if v == "" {
			continue
		}
		if state == nil {
			state = map[string]string{}
		}
		state[r.AliasLabelName] = v
	}
	return state, bad
}

// evalPath evaluates one jsonPath against data; only a parse error is an
// error (missing keys and failed lookups yield "").
func evalPath(data any, path string) (string, error) {
	tpl := strings.TrimSpace(path)
	if tpl == "" {
		return "", errors.New("empty path")
	}
	if !strings.HasPrefix(tpl, "{") || !strings.HasSuffix(tpl, "}") {
		// Karmada's form is "{ .field }"; kubectl's relaxed forms
		// ".field" and "field" are read as that too.
		if r := tpl[0]; r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
			tpl = "." + tpl
		}
		tpl = "{" + tpl + "}"
	}
	j := jsonpath.New("statePreservation")
	j.AllowMissingKeys(true)
	if err := j.Parse(tpl); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := j.Execute(&buf, data); err != nil {
		return "", nil
	}
	return buf.String(), nil
}

// InjectPreservedLabels returns manifest (the object rendered for cluster)
// with the PreservedLabels of p's evictions added to metadata.labels, for
// every eviction that has some and whose ClustersBeforeFailover does not
// name cluster: only the copies in clusters new since that failover get
// them, as Karmada injects them into the new copies only. Evictions are
// taken in the placement's order, so on a label two of them set the later
// one wins, and an injected label replaces the template's (overrides
// included). Purged evictions count too: their record stays in the
// placement until a reschedule forgets it, and so do the labels, so a
// purge does not change the new copies.
//
// manifest is not changed: when labels are added the result is a copy (of
// the top level, metadata and labels; the rest is shared). Pure.
func InjectPreservedLabels(manifest map[string]any, p events.PlacementDecision, cluster string) map[string]any {
	var add map[string]string
	for _, ev := range p.Evictions {
		if len(ev.PreservedLabels) == 0 || slices.Contains(ev.ClustersBeforeFailover, cluster) {
			continue
		}
		if add == nil {
			add = map[string]string{}
		}
		maps.Copy(add, ev.PreservedLabels)
	}
	if len(add) == 0 {
		return manifest
	}
	out := maps.Clone(manifest)
	md, _ := manifest["metadata"].(map[string]any)
	md = maps.Clone(md)
	if md == nil {
		md = map[string]any{}
	}
	labels, _ := md["labels"].(map[string]any)
	labels = maps.Clone(labels)
	if labels == nil {
		labels = map[string]any{}
	}
	for k, v := range add {
		labels[k] = v
	}
	md["labels"] = labels
	out["metadata"] = md
	return out
}
