package schedulerd

import (
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/schedulerd/failover"
)

// workHealth is what failover reads of executord's work statuses: each
// template's last status per cluster, and since when the template's
// applicationFailureDetection rules have held in each cluster.
type workHealth struct {
	statuses  map[events.ObjectKey]map[string]events.WorkStatus
	ruleSince map[events.ObjectKey]map[string]time.Time
}

func newWorkHealth() workHealth {
	return workHealth{statuses: map[events.ObjectKey]map[string]events.WorkStatus{}, ruleSince: map[events.ObjectKey]map[string]time.Time{}}
}

// record keeps what failover reads of a work status; false when the
// status is older than the one held. b is the template's binding (nil:
// not bound), whose rules the status is judged by; now stamps a status
// without a time.
func (w *workHealth) record(st events.WorkStatus, deleted bool, b *events.Binding, now func() time.Time) bool {
	m := w.statuses[st.Key]
	if old, ok := m[st.Cluster]; ok && old.UpdatedAt.After(st.UpdatedAt) {
		return false
	}
	if deleted {
		delete(m, st.Cluster)
		if len(m) == 0 {
			delete(w.statuses, st.Key)
		}
		w.noteRules(st, false, b, now)
		return true
	}
	defer w.noteRules(st, true, b, now)
	if m == nil {
		m = map[string]events.WorkStatus{}
		w.statuses[st.Key] = m
	}
	m[st.Cluster] = events.WorkStatus{Key: st.Key, Cluster: st.Cluster, Generation: st.Generation, BindingRevision: st.BindingRevision,
		Phase: st.Phase, Replicas: st.Replicas, ReadyReplicas: st.ReadyReplicas, Health: st.Health, AvailableReplicas: st.AvailableReplicas,
		UnavailableReplicas: st.UnavailableReplicas, UnhealthySince: st.UnhealthySince, PreservedState: st.PreservedState, UpdatedAt: st.UpdatedAt}
	return true
}

// noteRules keeps since when the template's applicationFailureDetection
// rules have held in the status's cluster: from the first status they hold
// for (after a schedulerd restart: the last status read back, which is no
// earlier than when they began to hold, so a toleration is never cut short).
func (w *workHealth) noteRules(st events.WorkStatus, present bool, b *events.Binding, now func() time.Time) {
	holds := false
	if b != nil && present {
		_, holds = failover.RulesHold(failover.Behavior(b.Spec), st)
	}
	m := w.ruleSince[st.Key]
	if !holds {
		delete(m, st.Cluster)
		if len(m) == 0 {
			delete(w.ruleSince, st.Key)
		}
		return
	}
	if _, ok := m[st.Cluster]; ok {
		return
	}
	if m == nil {
		m = map[string]time.Time{}
		w.ruleSince[st.Key] = m
	}
	at := st.UpdatedAt
	if at.IsZero() {
		at = now()
	}
	m[st.Cluster] = at
}
