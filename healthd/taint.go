package healthd

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events/policy"
)

// TaintPolicy decides a cluster's taints from its state. It is Karmada's
// cluster controller (reference §6.1: NoSchedule `cluster.karmada.io/not-ready`
// when the Ready condition is False or missing, `cluster.karmada.io/unreachable`
// when it is Unknown, the other key removed, both removed when Ready) plus
// Flotilla's default cluster taint policy, the part Karmada leaves to a
// ClusterTaintPolicy: once a cluster has been NotReady or Unreachable
// without a break for NoExecuteAfter, the same key is added with effect
// NoExecute, so workloads that do not tolerate it are moved away.
//
// Unknown (not probed yet, or no credentials) gets the not-ready NoSchedule
// taint only, never NoExecute: healthd not knowing is no evidence that the
// cluster is gone (a pull-mode cluster is served by its own executord).
type TaintPolicy struct {
	// NoExecuteAfter: how long a cluster must have been NotReady or
	// Unreachable, continuously (a swap between the two does not restart
	// it), before it is tainted NoExecute. 0: never.
	NoExecuteAfter time.Duration
}

// Taints returns the taints of a cluster in state at now; badSince is when
// it became NotReady or Unreachable (zero if it is neither). A taint
// already in current (same key and effect) keeps its TimeAdded; a new one is
// stamped now. The result is ordered NoSchedule before NoExecute.
func (p TaintPolicy) Taints(state string, badSince time.Time, current []corev1.Taint, now time.Time) []corev1.Taint {
	var key string
	switch state {
	case StateReady, StateSuspect:
		return nil
	case StateUnreachable:
		key = policy.TaintClusterUnreachable
	default: // NotReady, Unknown
		key = policy.TaintClusterNotReady
	}
	effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule}
	if p.NoExecuteAfter > 0 && bad(state) && !badSince.IsZero() && !now.Before(badSince.Add(p.NoExecuteAfter)) {
		effects = append(effects, corev1.TaintEffectNoExecute)
	}
	out := make([]corev1.Taint, 0, len(effects))
	for _, effect := range effects {
		added := metav1.NewTime(now)
		for _, c := range current {
			if c.Key == key && c.Effect == effect && c.TimeAdded != nil {
				added = *c.TimeAdded
			}
		}
		out = append(out, corev1.Taint{Key: key, Effect: effect, TimeAdded: &added})
	}
	return out
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
