package core

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Ledger is the FederatedResourceQuota bookkeeping (reference features §4):
// the quotas of every namespace, what each has used, and what each placed
// workload counts against them. Admission is arithmetic on it alone.
// schedulerd keeps one in memory; simulate keeps one per run. The contract
// a replacement must keep (a per-partition ledger reserving through a
// shared store, so that several schedulers never spend the same room) is
// SetQuota, RemoveQuota, Record, Admit, Release and Used. Not safe for
// concurrent use.
type Ledger struct {
	quotas map[string][]*quotaEntry // namespace -> its quotas, in name order
	usage  map[events.ObjectKey]corev1.ResourceList
}

type quotaEntry struct {
	q    policy.FederatedResourceQuota
	used corev1.ResourceList
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{quotas: map[string][]*quotaEntry{}, usage: map[events.ObjectKey]corev1.ResourceList{}}
}

// SetQuota adds or replaces a quota. Its usage is used when given (a
// status.overallUsed `flotilla simulate` reads), else the sum of what the
// recorded workloads of its namespace count, restricted to the resources
// it limits (Karmada's recalculation, reference features §4.4).
func (l *Ledger) SetQuota(q policy.FederatedResourceQuota, used corev1.ResourceList) {
	if used == nil {
		sum := corev1.ResourceList{}
		for k, u := range l.usage {
			if k.Namespace == q.Namespace {
				policy.AddTo(sum, q.Restrict(u))
			}
		}
		used = sum
	}
	l.RemoveQuota(q.Namespace, q.Name)
	qs := append(l.quotas[q.Namespace], &quotaEntry{q: q, used: used})
	slices.SortFunc(qs, func(a, b *quotaEntry) int { return strings.Compare(a.q.Name, b.q.Name) })
	l.quotas[q.Namespace] = qs
}

// RemoveQuota forgets a quota.
func (l *Ledger) RemoveQuota(namespace, name string) {
	qs := slices.DeleteFunc(l.quotas[namespace], func(e *quotaEntry) bool { return e.q.Name == name })
	if len(qs) == 0 {
		delete(l.quotas, namespace)
		return
	}
	l.quotas[namespace] = qs
}

// Limited reports whether any quota limits namespace.
func (l *Ledger) Limited(namespace string) bool { return len(l.quotas[namespace]) > 0 }

// Used is what the quota namespace/name has used; ok is false when there
// is no such quota.
func (l *Ledger) Used(namespace, name string) (used corev1.ResourceList, ok bool) {
	for _, e := range l.quotas[namespace] {
		if e.q.Name == name {
			return e.used, true
		}
	}
	return nil, false
}

// Record sets what key counts without admission (a placement already
// made, read back at start-up); the quotas' usage is not changed, so
// record before SetQuota.
func (l *Ledger) Record(key events.ObjectKey, usage corev1.ResourceList) {
	if usage == nil {
		delete(l.usage, key)
		return
	}
	l.usage[key] = usage
}

// Admit admits a change of what the workload key counts to usage, as
// Karmada's ResourceBinding webhook does (reference features §4.3): the
// change (usage less what key counted so far) is looked at by every quota
// of key's namespace in name order, and refused with the first quota's
// message that it would take over a limit. Admitted, every quota it
// touches has its usage raised or lowered and key counts usage; refused,
// nothing changes. Cluster-scoped workloads are never counted.
func (l *Ledger) Admit(key events.ObjectKey, usage corev1.ResourceList) (exceeded string) {
	if key.Namespace == "" {
		return ""
	}
	if !l.Limited(key.Namespace) {
		l.Record(key, usage) // no quota to ask; counted should one come
		return ""
	}
	delta := policy.UsageDelta(l.usage[key], usage)
	if delta == nil {
		l.Record(key, usage)
		return ""
	}
	qs := l.quotas[key.Namespace]
	after := make([]corev1.ResourceList, len(qs))
	for i, e := range qs {
		a := e.q.Admit(e.used, delta)
		if a.Exceeded != "" {
			return a.Exceeded
		}
		after[i] = e.used
		if a.Affected {
			after[i] = a.Used
		}
	}
	for i, e := range qs {
		e.used = after[i]
	}
	l.Record(key, usage)
	return ""
}

// Release takes what key counted out of its namespace's quotas (the
// workload was deleted); Karmada's recalculation gives the same.
func (l *Ledger) Release(key events.ObjectKey) {
	u, ok := l.usage[key]
	if !ok {
		return
	}
	delete(l.usage, key)
	for _, e := range l.quotas[key.Namespace] {
		r := e.q.Restrict(u)
		if r == nil {
			continue
		}
		next := corev1.ResourceList{}
		for n, q := range e.used {
			next[n] = q.DeepCopy()
		}
		for n, q := range r {
			cur := next[n]
			cur.Sub(q)
			if cur.Sign() <= 0 {
				delete(next, n)
				continue
			}
			next[n] = cur
		}
		e.used = next
	}
}

// UsageOf is what a placement of b on clusters counts against quotas
// (policy.Usage with b's one-replica requests).
func UsageOf(b *events.Binding, clusters []events.TargetCluster) corev1.ResourceList {
	if len(b.ReplicaRequirements) == 0 || len(clusters) == 0 {
		return nil
	}
	replicas := make([]int32, len(clusters))
	for i, c := range clusters {
		replicas[i] = c.Replicas
	}
	return policy.Usage(b.ReplicaRequirements, nil, replicas)
}
