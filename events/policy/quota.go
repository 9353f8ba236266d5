package policy

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KindFederatedResourceQuota is policy.karmada.io/v1alpha1
// FederatedResourceQuota (reference features §4).
const KindFederatedResourceQuota = "FederatedResourceQuota"

// FederatedResourceQuota limits what the workloads of one namespace may
// request across every member cluster together.
type FederatedResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              FederatedResourceQuotaSpec   `json:"spec"`
	Status            FederatedResourceQuotaStatus `json:"status,omitempty"`
}

// FederatedResourceQuotaSpec: the namespace's overall limits and, per
// cluster, the ResourceQuota Karmada would create there.
type FederatedResourceQuotaSpec struct {
	Overall           corev1.ResourceList       `json:"overall"`
	StaticAssignments []StaticClusterAssignment `json:"staticAssignments,omitempty"`
}

// StaticClusterAssignment is one cluster's share of the quota.
type StaticClusterAssignment struct {
	ClusterName string              `json:"clusterName"`
	Hard        corev1.ResourceList `json:"hard"`
}

// FederatedResourceQuotaStatus is what the quota has used.
type FederatedResourceQuotaStatus struct {
	Overall          corev1.ResourceList  `json:"overall,omitempty"`
	OverallUsed      corev1.ResourceList  `json:"overallUsed,omitempty"`
	AggregatedStatus []ClusterQuotaStatus `json:"aggregatedStatus,omitempty"`
}

// ClusterQuotaStatus is one cluster's ResourceQuota as reported.
type ClusterQuotaStatus struct {
	ClusterName string              `json:"clusterName"`
	Hard        corev1.ResourceList `json:"hard,omitempty"`
	Used        corev1.ResourceList `json:"used,omitempty"`
}

// ReasonQuotaExceeded is the reason of a placement a quota refused.
const ReasonQuotaExceeded = "QuotaExceeded"

// Component is one pod template of a multi-component workload
// (ResourceBinding spec.components): its replicas and one replica's
// requests.
type Component struct {
	Name                string                 `json:"name"`
	Replicas            int32                  `json:"replicas"`
	ReplicaRequirements *ComponentRequirements `json:"replicaRequirements,omitempty"`
}

// ComponentRequirements are one replica's requirements; only the requests
// count for quota and capacity.
type ComponentRequirements struct {
	NodeClaim         *NodeClaim          `json:"nodeClaim,omitempty"`
	ResourceRequest   corev1.ResourceList `json:"resourceRequest,omitempty"`
	PriorityClassName string              `json:"priorityClassName,omitempty"`
}

// Usage is what one placed workload counts against the quotas of its
// namespace (reference features §4.2): with components, the requests of
// one whole set (Σ replicas × request over the components with both) per
// cluster entry, whatever the entries' replicas; else one replica's
// request × the replicas placed in all clusters. Keys are the raw request
// names (cpu, memory, nvidia.com/gpu). nil when it counts nothing.
func Usage(request corev1.ResourceList, components []Component, clusterReplicas []int32) corev1.ResourceList {
	if len(components) > 0 {
		if len(clusterReplicas) == 0 {
			return nil
		}
		set := corev1.ResourceList{}
		for _, c := range components {
			if c.Replicas == 0 || c.ReplicaRequirements == nil {
				continue
			}
			addScaled(set, c.ReplicaRequirements.ResourceRequest, int64(c.Replicas))
		}
		out := corev1.ResourceList{}
		addScaled(out, set, int64(len(clusterReplicas)))
		return nonZero(out)
	}
	var total int64
	for _, r := range clusterReplicas {
		total += int64(r)
	}
	if total == 0 || len(request) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	addScaled(out, request, total)
	return nonZero(out)
}

// AddTo adds each quantity of l into sum.
func AddTo(sum, l corev1.ResourceList) {
	for name, q := range l {
		cur := sum[name]
		cur.Add(q)
		sum[name] = cur
	}
}

// addScaled adds n × each quantity of from into into.
func addScaled(into, from corev1.ResourceList, n int64) {
	for name, q := range from {
		cur := into[name]
		cur.Add(scaled(q, n))
		into[name] = cur
	}
}

// scaled is q × n, exact in milli-units.
func scaled(q resource.Quantity, n int64) resource.Quantity {
	return *resource.NewMilliQuantity(q.MilliValue()*n, q.Format)
}

func nonZero(l corev1.ResourceList) corev1.ResourceList {
	for name, q := range l {
		if q.IsZero() {
			delete(l, name)
		}
	}
	if len(l) == 0 {
		return nil
	}
	return l
}

// UsageDelta is after − before, entries that come to zero dropped; nil
// when nothing changed.
func UsageDelta(before, after corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range after {
		out[name] = q.DeepCopy()
	}
	for name, q := range before {
		cur := out[name]
		cur.Sub(q)
		out[name] = cur
	}
	return nonZero(out)
}

// QuotaAdmission is the admission of one usage change by one quota
// (reference features §4.3 step 4).
type QuotaAdmission struct {
	// Affected: the change touches a resource the quota limits; when
	// false the quota is not looked at and Used stays as it was.
	Affected bool
	// Used is the quota's usage after the change (Karmada's candidate,
	// entries at or below zero dropped): its new status.overallUsed when
	// the change is admitted.
	Used corev1.ResourceList
	// Exceeded says why the change is refused ("" when admitted), in
	// Karmada's words.
	Exceeded string
}

// Admit looks at a change of the namespace's usage by delta against this
// quota, whose usage is used: the delta restricted to the quota's overall
// keys is added to used, and the change is refused if any resource with a
// limit is then above it (equal is allowed). Every tracked resource is
// checked, not only the changed ones, so a change is refused while the
// quota is over its limit anywhere. Resources are checked in name order;
// the first one over its limit is named.
func (q *FederatedResourceQuota) Admit(used, delta corev1.ResourceList) QuotaAdmission {
	if q.Spec.Overall == nil {
		return QuotaAdmission{Used: used}
	}
	restricted := q.Restrict(delta)
	if restricted == nil {
		return QuotaAdmission{Used: used}
	}
	candidate := corev1.ResourceList{}
	AddTo(candidate, used)
	AddTo(candidate, restricted)
	for name, c := range candidate {
		if c.Sign() <= 0 {
			delete(candidate, name)
		}
	}
	out := QuotaAdmission{Affected: true, Used: candidate}
	names := make([]corev1.ResourceName, 0, len(candidate))
	for name := range candidate {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		limit, ok := q.Spec.Overall[name]
		if c := candidate[name]; ok && c.Cmp(limit) > 0 {
			out.Exceeded = fmt.Sprintf("FederatedResourceQuota(%s/%s) exceeded for resource %s: requested sum %s, limit %s.",
				q.Namespace, q.Name, name, c.String(), limit.String())
			break
		}
	}
	return out
}

// Restrict keeps the entries of usage the quota limits (its overallUsed
// counts nothing else, reference features §4.4); nil when none is left.
func (q *FederatedResourceQuota) Restrict(usage corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, u := range usage {
		if _, ok := q.Spec.Overall[name]; ok {
			out[name] = u.DeepCopy()
		}
	}
	return nonZero(out)
}
