package readmodel

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Quota is one FederatedResourceQuota as `flotilla get
// federatedresourcequotas` shows it: its spec and its status, overall and
// overallUsed (reference features §4.4).
type Quota struct {
	Namespace         string                           `json:"namespace"`
	Name              string                           `json:"name"`
	Generation        int64                            `json:"generation"`
	Overall           corev1.ResourceList              `json:"overall"`
	OverallUsed       corev1.ResourceList              `json:"overallUsed"`
	StaticAssignments []policy.StaticClusterAssignment `json:"staticAssignments,omitempty"`
	record            events.ObjectRecord
}

// Record is the quota's accepted record.
func (q Quota) Record() events.ObjectRecord { return q.record }

// Quotas returns every FederatedResourceQuota policyd accepted, in key
// order, each with its overallUsed: what the placements of its namespace
// count (policy.Usage of each placement's binding, restricted to the
// resources the quota limits), the sum Karmada's recalculation gives and
// schedulerd's ledger holds. placements are the latest placement event of
// every template (events.AllPlacements).
func Quotas(p Published, placements []Stored) []Quota {
	var out []Quota
	for _, r := range p.SortedRecords() {
		if r.Role != events.RoleQuota {
			continue
		}
		var q policy.FederatedResourceQuota
		if events.UnmarshalJSON(r.Object, &q) != nil {
			continue
		}
		q.Namespace, q.Name = r.Key.Namespace, r.Key.Name
		out = append(out, Quota{Namespace: r.Key.Namespace, Name: r.Key.Name, Generation: r.Generation,
			Overall: q.Spec.Overall, OverallUsed: corev1.ResourceList{}, StaticAssignments: q.Spec.StaticAssignments, record: r})
	}
	if len(out) == 0 {
		return nil
	}
	for _, m := range placements {
		var d events.PlacementDecision
		if !m.is(events.TypePlacementDecided) || events.Decode(m.Event, &d) != nil || d.Binding == nil || len(d.Clusters) == 0 {
			continue
		}
		replicas := make([]int32, len(d.Clusters))
		for i, c := range d.Clusters {
			replicas[i] = c.Replicas
		}
		usage := policy.Usage(d.Binding.ReplicaRequirements, nil, replicas)
		for i := range out {
			q := &out[i]
			if q.Namespace != d.Key.Namespace {
				continue
			}
			frq := policy.FederatedResourceQuota{Spec: policy.FederatedResourceQuotaSpec{Overall: q.Overall}}
			policy.AddTo(q.OverallUsed, frq.Restrict(usage))
		}
	}
	return out
}
