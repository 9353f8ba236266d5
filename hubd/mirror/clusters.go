package mirror

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/readmodel"
)

// ClusterObject is the Cluster hubd writes on the hub for a member that
// has none there (joined with `flotilla join`): its registration's labels
// and spec, marked as hubd's (ManagedByLabel), never read back as input.
func ClusterObject(c readmodel.Cluster) policy.Cluster {
	r := c.Registration
	labels := map[string]string{ManagedByLabel: ManagedByHubd}
	for k, v := range r.Labels {
		labels[k] = v
	}
	spec := r.Spec
	spec.SecretRef, spec.ImpersonatorSecretRef = nil, nil // the credentials stay on the bus, sealed
	return policy.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: policy.ClusterAPIVersion, Kind: policy.KindCluster},
		ObjectMeta: metav1.ObjectMeta{Name: r.Name, Labels: labels},
		Spec:       spec,
	}
}

// ClusterStatus is a member's .status as Karmada's cluster-status
// controller writes it, read as `flotilla get clusters` reads it
// (readmodel.ClusterObject): healthd's conditions (Ready Unknown for an
// unreachable member, as Karmada has it), the version, the served APIs
// and the resource summary (here also for a member that reports no
// allocatable figures). A report without conditions gets a Ready
// condition derived from its state; no report, Ready Unknown.
func ClusterStatus(c readmodel.Cluster, now metav1.Time) policy.ClusterStatus {
	st := readmodel.ClusterObject(c).Status
	if st.ResourceSummary == nil && c.Capacity != nil {
		st.ResourceSummary = &policy.ResourceSummary{Allocatable: c.Capacity.Allocatable, Allocated: c.Capacity.Allocated, Allocating: c.Capacity.Allocating}
	}
	if len(st.Conditions) == 0 {
		st.Conditions = []metav1.Condition{readyFromState(c.Health, now)}
	}
	return st
}

// readyFromState is the Ready condition of a health report without
// conditions (h nil: none yet, Unknown).
func readyFromState(h *events.ClusterHealth, now metav1.Time) metav1.Condition {
	ready := metav1.Condition{Type: policy.ClusterConditionReady, Status: metav1.ConditionUnknown, Reason: "NotReported",
		Message: "healthd has not reported on this cluster yet", LastTransitionTime: now}
	if h == nil {
		return ready
	}
	ready.Status, ready.Reason = metav1.ConditionFalse, reasonWord(h.State, "ClusterNotReady")
	if h.Ready {
		ready.Status, ready.Reason = metav1.ConditionTrue, "ClusterReady"
	}
	ready.Message = h.Message
	if ready.Message == "" {
		ready.Message = fmt.Sprintf("cluster is %s", strings.ToLower(h.State))
		if h.Ready {
			ready.Message = "cluster is healthy and ready to accept workloads"
		}
	}
	if !h.Since.IsZero() {
		ready.LastTransitionTime = metav1.NewTime(h.Since)
	}
	return ready
}

// reasonWord turns a health state (Suspect, NotReady...) into a condition
// reason, which must be one CamelCase word.
func reasonWord(state, fallback string) string {
	w := strings.ReplaceAll(state, " ", "")
	if w == "" {
		return fallback
	}
	return "Cluster" + w
}

// PolicyConditions is the Accepted condition hubd writes on a policy or
// Cluster: True once policyd accepted the hub's content, False with every
// problem (field path and reason) when it was refused.
func PolicyConditions(problems []events.FieldError, now metav1.Time) []metav1.Condition {
	c := metav1.Condition{Type: ConditionAccepted, Status: metav1.ConditionTrue, Reason: ReasonPolicyAccepted,
		Message: "accepted by policyd", LastTransitionTime: now}
	if len(problems) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, ReasonValidationRejected, Problems(problems)
	}
	return []metav1.Condition{c}
}

// Problems is a refusal's problems in one line: "field: reason; ...".
func Problems(problems []events.FieldError) string {
	var parts []string
	for _, p := range problems {
		parts = append(parts, p.Field+": "+p.Reason)
	}
	return strings.Join(parts, "; ")
}
