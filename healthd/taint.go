package healthd

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// TaintPolicy decides a cluster's taints from its state, in two layers.
//
// The first is Karmada's cluster controller (reference §6.1), always on:
// NoSchedule `cluster.karmada.io/not-ready` while the Ready condition is
// False or missing (NotReady, Unknown), `cluster.karmada.io/unreachable`
// while it is Unknown because the API server does not answer
// (Unreachable), the other key removed, both removed when Ready.
//
// The second is a cluster taint policy, the part Karmada leaves to
// ClusterTaintPolicy objects. Without Rules it is Flotilla's default: once
// a cluster has been NotReady or Unreachable without a break for
// NoExecuteAfter, the same key is added with effect NoExecute, so
// workloads that do not tolerate it are moved away. Unknown (not probed
// yet, or no credentials) never gets NoExecute from the default: healthd not
// knowing is no evidence that the cluster is gone (a pull-mode cluster is
// served by its own executord). With Rules (--taint-policy), the rules
// replace the default.
type TaintPolicy struct {
	// NoExecuteAfter: how long a cluster must have been NotReady or
	// Unreachable, continuously (a swap between the two does not restart
	// it), before it is tainted NoExecute. 0: never. Ignored with Rules.
	NoExecuteAfter time.Duration
	// Rules are ClusterTaintPolicies (LoadTaintPolicies), applied in order.
	Rules []TaintRule
}

// TaintRule is one ClusterTaintPolicy, with Karmada's semantics (reference
// §6.1): while every AddOn condition matches the cluster's conditions (ANDed;
// an empty list never matches), the Taints not already present (same key and
// effect) are added, stamped now; then, while every RemoveOn condition
// matches, taints with the same key and effect are removed.
type TaintRule struct {
	Name     string
	Targets  *policy.ClusterAffinity // nil: every cluster
	AddOn    []MatchCondition
	RemoveOn []MatchCondition
	Taints   []corev1.Taint // key, value, effect
	// AddAfter (Flotilla's addAfterSeconds) is how long the AddOn
	// conditions must have held without a break before the taints are
	// added. Karmada has no such field and adds at once (0).
	AddAfter time.Duration
}

// MatchCondition is Karmada's: a condition type, In or NotIn, and statuses.
type MatchCondition struct {
	ConditionType string   `json:"conditionType"`
	Operator      string   `json:"operator"`
	StatusValues  []string `json:"statusValues"`
}

// Match operators.
const (
	OperatorIn    = "In"
	OperatorNotIn = "NotIn"
)

// For returns the policy with only the rules that target cluster c, for
// that cluster's Tracker.
func (p TaintPolicy) For(c policy.ClusterFacts) TaintPolicy {
	if p.Rules == nil {
		return p
	}
	out := TaintPolicy{NoExecuteAfter: p.NoExecuteAfter, Rules: []TaintRule{}}
	for _, r := range p.Rules {
		if r.Targets.Matches(c) {
			out.Rules = append(out.Rules, r)
		}
	}
	return out
}

// TaintState is what the policy looks at, and what it keeps between two
// evaluations of one cluster.
type TaintState struct {
	State string
	// BadSince: when the cluster became NotReady or Unreachable (zero if it
	// is neither), kept across a swap between the two.
	BadSince time.Time
	// Taints are the current taints. A taint kept keeps its TimeAdded; a new
	// one is stamped now.
	Taints []corev1.Taint
	// Holding[i]: since when rule i's AddOn conditions have held (zero: they
	// do not).
	Holding []time.Time
}

// Apply evaluates the policy at now. The result lists the controller's
// NoSchedule taint first, then the policy's taints in the order they were
// added.
func (p TaintPolicy) Apply(s TaintState, now time.Time) TaintState {
	out := TaintState{State: s.State, BadSince: s.BadSince}
	key, ok := controllerKey(s.State)
	if ok {
		out.Taints = append(out.Taints, keep(s.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule}, now))
	}
	if p.Rules == nil {
		if ok && p.NoExecuteAfter > 0 && events.ClusterLost(s.State) && !s.BadSince.IsZero() && !now.Before(s.BadSince.Add(p.NoExecuteAfter)) {
			out.Taints = append(out.Taints, keep(s.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute}, now))
		}
		return out
	}
	var own []corev1.Taint
	for _, t := range s.Taints {
		if !controllerTaint(t) {
			own = append(own, t)
		}
	}
	conditions := readyIs(readyStatus(s.State))
	out.Holding = make([]time.Time, len(p.Rules))
	for i, r := range p.Rules {
		if matches(conditions, r.AddOn) {
			out.Holding[i] = now
			if i < len(s.Holding) && !s.Holding[i].IsZero() {
				out.Holding[i] = s.Holding[i]
			}
			if !now.Before(out.Holding[i].Add(r.AddAfter)) {
				own = addTaints(own, r.Taints, now)
			}
		}
		if matches(conditions, r.RemoveOn) {
			own = removeTaints(own, r.Taints)
		}
	}
	out.Taints = append(out.Taints, own...)
	return out
}

// controllerKey is the key of the controller's NoSchedule taint for state:
// Karmada's rule for the Ready condition healthd publishes, except that a
// cluster healthd has not judged (Unknown) is one without a Ready
// condition, which Karmada taints not-ready.
func controllerKey(state string) (string, bool) {
	if state == events.ClusterStateUnknown {
		return policy.TaintClusterNotReady, true
	}
	return policy.ReadyTaint(readyStatus(state))
}

// controllerTaint reports whether t is one the controller layer manages.
func controllerTaint(t corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule && (t.Key == policy.TaintClusterNotReady || t.Key == policy.TaintClusterUnreachable)
}

// readyStatus is the status of the Ready condition healthd publishes for state.
func readyStatus(state string) string {
	switch state {
	case events.ClusterStateReady, events.ClusterStateSuspect:
		return "True"
	case events.ClusterStateNotReady:
		return "False"
	}
	return "Unknown"
}

// matches is Karmada's conditionMatches: every match condition holds
// (ANDed); an empty list, or a condition type the cluster does not have,
// never matches.
func matches(conditions []events.ClusterCondition, want []MatchCondition) bool {
	if len(want) == 0 {
		return false
	}
	for _, w := range want {
		i := slices.IndexFunc(conditions, func(c events.ClusterCondition) bool { return c.Type == w.ConditionType })
		if i < 0 {
			return false
		}
		in := slices.Contains(w.StatusValues, conditions[i].Status)
		if (w.Operator == OperatorIn) != in {
			return false
		}
	}
	return true
}

// keep returns t with the TimeAdded of the same taint (key and effect) in
// current, or stamped now if there is none.
func keep(current []corev1.Taint, t corev1.Taint, now time.Time) corev1.Taint {
	added := metav1.NewTime(now)
	for _, c := range current {
		if c.MatchTaint(&t) && c.TimeAdded != nil {
			added = *c.TimeAdded
		}
	}
	t.TimeAdded = &added
	return t
}

func addTaints(current, add []corev1.Taint, now time.Time) []corev1.Taint {
	for _, t := range add {
		if !slices.ContainsFunc(current, func(c corev1.Taint) bool { return c.MatchTaint(&t) }) {
			added := metav1.NewTime(now)
			current = append(current, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect, TimeAdded: &added})
		}
	}
	return current
}

func removeTaints(current, remove []corev1.Taint) []corev1.Taint {
	return slices.DeleteFunc(current, func(c corev1.Taint) bool {
		return slices.ContainsFunc(remove, func(t corev1.Taint) bool { return c.MatchTaint(&t) })
	})
}

func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].MatchTaint(&b[i]) || a[i].Value != b[i].Value || !a[i].TimeAdded.Equal(b[i].TimeAdded) {
			return false
		}
	}
	return true
}
