package readmodel

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/binding"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// Warnings before surprises: what `apply` and `delete` say before they
// publish, computed against the accepted objects, so that a typo or an
// overlap never silently moves a workload.

// claimants are the propagation policies of p, with applied ones (docs)
// in place of the accepted ones they replace and deleted ones left out.
func claimants(p Published, docs []validation.Document, deleted map[events.ObjectKey]bool) (map[events.ObjectKey]binding.Candidate, map[events.ObjectKey]bool) {
	out := map[events.ObjectKey]binding.Candidate{}
	applied := map[events.ObjectKey]bool{}
	add := func(key events.ObjectKey, obj json.RawMessage) {
		var pp policy.PropagationPolicy
		if json.Unmarshal(obj, &pp) == nil {
			out[key] = binding.Candidate{Key: key, Policy: pp}
		}
	}
	for k, r := range p.Records {
		if isPropagation(k) && !deleted[k] {
			add(k, r.Object)
		}
	}
	for _, d := range docs {
		k := events.KeyOf(d.APIVersion, d.Kind, d.Namespace, d.Name)
		if isPropagation(k) {
			raw, _ := json.Marshal(d.Object)
			add(k, raw)
			applied[k] = true
		}
	}
	return out, applied
}

func isPropagation(k events.ObjectKey) bool {
	return k.Group == "policy.karmada.io" && (k.Kind == policy.KindPropagationPolicy || k.Kind == policy.KindClusterPropagationPolicy)
}

// refOf names a key as the user types it: kind/name, -n namespace.
func refOf(k events.ObjectKey) string { return k.Ref() }

// ApplyWarnings says, before docs are applied over p, what would surprise:
// every cluster name a propagation policy's placement gives that is no
// member (NonMembers: nothing is placed there), and every template the
// applied objects touch that several propagation policies match: which
// one claims it and why (Karmada's rules, binding.Claim).
func ApplyWarnings(p Published, members []string, docs []validation.Document) []string {
	var out []string
	for _, d := range docs {
		k := events.KeyOf(d.APIVersion, d.Kind, d.Namespace, d.Name)
		if !isPropagation(k) {
			continue
		}
		raw, _ := json.Marshal(d.Object)
		var pp policy.PropagationPolicy
		if json.Unmarshal(raw, &pp) != nil {
			continue
		}
		for _, n := range NonMembers(&pp.Spec, members) {
			out = append(out, refOf(k)+": "+n.String())
		}
	}
	cands, applied := claimants(p, docs, nil)
	templates := map[events.ObjectKey]map[string]any{}
	touched := map[events.ObjectKey]bool{}
	for k, r := range p.Records {
		if r.Role == events.RoleTemplate {
			var obj map[string]any
			if json.Unmarshal(r.Object, &obj) == nil {
				templates[k] = obj
			}
		}
	}
	for _, d := range docs {
		k := events.KeyOf(d.APIVersion, d.Kind, d.Namespace, d.Name)
		if events.RoleOf(d.APIVersion, d.Kind, d.Namespace) == events.RoleTemplate {
			templates[k], touched[k] = d.Object, true
		}
	}
	for _, k := range sortedKeys(templates) {
		facts := policy.ResourceFactsOf(templates[k])
		matched := matching(cands, facts)
		if len(matched) < 2 {
			continue
		}
		byApplied := touched[k]
		for _, c := range matched {
			byApplied = byApplied || applied[c.Key]
		}
		if !byApplied {
			continue
		}
		current, _ := p.ClaimingPolicy(k) // nil too when its claim lapsed
		if current == nil && !touched[k] {
			// An accepted template no policy claims: each applied policy
			// is rebound to it as it arrives, so the first to match
			// claims it, and the later ones only preempt.
			current = firstClaimant(facts, matched, applied, docs)
		}
		winner := binding.Claim(facts, current, matched)
		out = append(out, claimWarning(k, facts, current, winner, matched))
	}
	for _, k := range sortedKeys(templates) {
		if !touched[k] && len(applied) == 0 {
			continue // nothing applied changes its claim
		}
		ref, _ := p.ClaimingPolicy(k)
		if ref == nil {
			if touched[k] && len(matching(cands, policy.ResourceFactsOf(templates[k]))) == 0 {
				if w := UnclaimedChange(p, k); w != "" {
					out = append(out, w)
				}
			}
			continue
		}
		holder := ref.Key()
		c, ok := cands[holder]
		if !ok || !(touched[k] || applied[holder]) {
			continue
		}
		if facts := policy.ResourceFactsOf(templates[k]); !c.Selects(facts) {
			out = append(out, handOver(k, holder, refOf(holder)+" no longer selects it; that", facts, cands))
		}
	}
	return out
}

// firstClaimant is the policy that claims an unclaimed accepted template
// when the applied policies (docs order, as apply publishes them) arrive
// one after the other: the first whose arrival makes a policy match claims
// it, by Karmada's rules among those matching then. nil when none does.
func firstClaimant(facts policy.ResourceFacts, matched []binding.Candidate, applied map[events.ObjectKey]bool, docs []validation.Document) *events.PolicyRef {
	var before []binding.Candidate // the accepted policies that match
	for _, c := range matched {
		if !applied[c.Key] {
			before = append(before, c)
		}
	}
	for _, d := range docs {
		k := events.KeyOf(d.APIVersion, d.Kind, d.Namespace, d.Name)
		i := slices.IndexFunc(matched, func(c binding.Candidate) bool { return c.Key == k })
		if i < 0 || !applied[k] {
			continue
		}
		if c := binding.Claim(facts, nil, slices.Concat(before, matched[i:i+1])); c != nil {
			return &events.PolicyRef{Kind: c.Key.Kind, Namespace: c.Key.Namespace, Name: c.Key.Name}
		}
	}
	return nil
}

// UnclaimedChange says that a change to the template at k reaches no
// member when its placement stays from a policy that claims it no more
// (ClaimLapse): policyd accepts the change and places nothing anew, as
// Karmada does for a template whose claim it dropped. "" for any other
// template.
func UnclaimedChange(p Published, k events.ObjectKey) string {
	lapse := p.ClaimLapse(k)
	if lapse == "" {
		return ""
	}
	return fmt.Sprintf("%s: no policy claims it (%s claimed it, %s): this change reaches no member, where it stays as it was placed",
		refOf(k), refOf(p.Bindings[k].Policy.Key()), lapse)
}

// handOver says what becomes of template k when its policy holder stops
// claiming it (how: "deleting X", or "X no longer selects it; that"):
// another policy claims it, or it is unclaimed (Karmada drops the claim),
// where it stays as it was propagated, and nothing places it, or a later
// change to it, anew.
func handOver(k, holder events.ObjectKey, how string, facts policy.ResourceFacts, cands map[events.ObjectKey]binding.Candidate) string {
	var others []binding.Candidate
	for _, c := range matching(cands, facts) {
		if c.Key != holder {
			others = append(others, c)
		}
	}
	if next := binding.Claim(facts, nil, others); next != nil {
		return fmt.Sprintf("%s: %s hands it to %s", refOf(k), how, refOf(next.Key))
	}
	return fmt.Sprintf("%s: %s leaves it unclaimed: it stays where it runs, and no policy places it anew", refOf(k), how)
}

// DeleteWarnings says, before the objects at deleted are deleted, which
// templates a deleted propagation policy leaves: claimed by another policy
// now (which), or unclaimed (they stay where they run, and nothing places
// them anew).
func DeleteWarnings(p Published, deleted []events.ObjectKey) []string {
	gone := map[events.ObjectKey]bool{}
	for _, k := range deleted {
		gone[k] = true
	}
	cands, _ := claimants(p, nil, gone)
	var out []string
	for _, r := range p.SortedRecords() {
		ref, _ := p.ClaimingPolicy(r.Key)
		if r.Role != events.RoleTemplate || ref == nil || gone[r.Key] {
			continue
		}
		holder := ref.Key()
		if !gone[holder] {
			continue
		}
		var obj map[string]any
		if json.Unmarshal(r.Object, &obj) != nil {
			continue
		}
		out = append(out, handOver(r.Key, holder, "deleting "+refOf(holder), policy.ResourceFactsOf(obj), cands))
	}
	return out
}

// matching are the candidates whose selectors match the template, in key
// order.
func matching(cands map[events.ObjectKey]binding.Candidate, r policy.ResourceFacts) []binding.Candidate {
	var out []binding.Candidate
	for _, k := range sortedKeys(cands) {
		c := cands[k]
		if c.Key.Kind == policy.KindPropagationPolicy && c.Key.Namespace != r.Namespace {
			continue
		}
		if policy.SelectorsPriority(c.Policy.Spec.ResourceSelectors, r) > policy.PriorityMisMatch {
			out = append(out, c)
		}
	}
	return out
}

// claimWarning says which of several matching policies claims a template
// and why, by the rule that decided between it and the others.
func claimWarning(k events.ObjectKey, facts policy.ResourceFacts, current *events.PolicyRef, winner *binding.Candidate, matched []binding.Candidate) string {
	var names []string
	for _, c := range matched {
		names = append(names, refOf(c.Key))
	}
	why := "the same priority and selector: the smallest name wins"
	var others []binding.Candidate
	for _, c := range matched {
		if c.Key != winner.Key {
			others = append(others, c)
		}
	}
	prio := func(c binding.Candidate) int32 {
		if c.Policy.Spec.Priority == nil {
			return 0
		}
		return *c.Policy.Spec.Priority
	}
	sel := func(c binding.Candidate) policy.SelectorPriority {
		return policy.SelectorsPriority(c.Policy.Spec.ResourceSelectors, facts)
	}
	o := others[0]
	switch {
	case current != nil && current.Kind == winner.Key.Kind && current.Name == winner.Key.Name && current.Namespace == winner.Key.Namespace:
		why = "it claimed the template first and keeps it (only a policy with preemption: Always and a higher priority takes a claimed template)"
	case winner.Key.Kind != o.Key.Kind:
		why = "a PropagationPolicy comes before a ClusterPropagationPolicy"
	case prio(*winner) != prio(o):
		why = fmt.Sprintf("its priority %d is the highest (%s has %d)", prio(*winner), refOf(o.Key), prio(o))
	case sel(*winner) != sel(o):
		why = "it selects the template " + selectorWords[sel(*winner)] + ", " + refOf(o.Key) + " only " + selectorWords[sel(o)]
	}
	return fmt.Sprintf("%s is matched by %d policies (%s): %s claims it, as %s", refOf(k), len(matched), strings.Join(names, ", "), refOf(winner.Key), why)
}

var selectorWords = map[policy.SelectorPriority]string{
	policy.PriorityMatchName: "by name", policy.PriorityMatchLabelSelector: "by a label selector", policy.PriorityMatchAll: "by kind alone",
}

func sortedKeys[V any](m map[events.ObjectKey]V) []events.ObjectKey {
	keys := make([]events.ObjectKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}
