package mirror

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/readmodel"
)

// Reasons of the conditions hubd writes (Karmada's words where Karmada has
// them).
const (
	ReasonScheduled          = "BindingScheduled"
	ReasonNoClusterFit       = "NoClusterFit"
	ReasonSchedulerError     = "SchedulerError"
	ReasonFullyApplied       = "FullyAppliedSuccess"
	ReasonNotFullyApplied    = "FullyAppliedFailed"
	ReasonPolicyAccepted     = "Accepted"
	ReasonValidationRejected = "ValidationFailed"
)

// live reports whether s is a copy the placement keeps (not one being or
// already removed).
func live(s events.WorkStatus) bool {
	return s.Phase != events.WorkDeleted && s.Phase != events.WorkDeleting && s.Phase != readmodel.WorkEvicted
}

// applied reports whether s says the member holds the template's current
// generation.
func applied(s events.WorkStatus, generation int64) bool {
	switch s.Phase {
	case events.WorkApplied, events.WorkProgressing, events.WorkRunning:
		return s.Generation >= generation
	}
	return false
}

// TemplateStatus is the .status hubd writes on hub, a placed template, as
// Karmada's default interpreter aggregates it: the kind's
// statusAggregation script's result when it has one (t.AggregatedStatus);
// else, for the workload kinds (Deployment, StatefulSet, ReplicaSet,
// DaemonSet), the members' replica counts summed, with observedGeneration
// the hub's generation once every member holds the current template
// (current: the bus's accepted template is the hub's); for a batch Job, a
// LoadBalancer Service and a Pod, the members' reflected statuses
// aggregated (jobStatus, serviceStatus, podStatus). ok is false for a kind
// without either, a Service of another type and a finished Job: its status
// is left as it is.
func TemplateStatus(hub map[string]any, t readmodel.Template, current bool) (status map[string]any, ok bool) {
	if t.AggregatedStatus != nil {
		return t.AggregatedStatus, true
	}
	switch kindOf(hub) {
	case "batch/Job":
		st, _ := hub["status"].(map[string]any)
		return jobStatus(st, statusItems(t))
	case "/Service":
		if typ, _, _ := unstructured.NestedString(hub, "spec", "type"); typ != "LoadBalancer" {
			return nil, false
		}
		return serviceStatus(statusItems(t)), true
	case "/Pod":
		return podStatus(statusItems(t)), true
	}
	kind, _ := hub["kind"].(string)
	hubGeneration, _, _ := unstructured.NestedInt64(hub, "metadata", "generation")
	var replicas, currentReplicas, ready, available, updated, unavailable int64
	all := current && t.Placement.Scheduled
	generation := t.Placement.Generation
	for _, s := range t.Work {
		if !live(s) {
			continue
		}
		// The member's own status counts (executord.Reflect), as Karmada
		// sums them: its spec's replicas would exceed the ready, updated
		// and available counts the API server checks against
		// status.replicas while a scale-down or rollout runs. A status
		// without them (an older executord) counts as before.
		r := reflected(s, "replicas", "desiredNumberScheduled", int64(s.Replicas))
		replicas += r
		currentReplicas += reflected(s, "currentReplicas", "currentNumberScheduled", r)
		ready += int64(s.ReadyReplicas)
		available += int64(s.AvailableReplicas)
		unavailable += int64(s.UnavailableReplicas)
		if applied(s, generation) && s.ObservedGeneration > 0 {
			// The member has observed the current spec: its updated
			// replicas run it.
			updated += reflected(s, "updatedReplicas", "updatedNumberScheduled", int64(s.ReadyReplicas))
		}
		if !applied(s, generation) {
			all = false
		}
	}
	for _, c := range t.Placement.Clusters {
		if !slices.ContainsFunc(t.Work, func(s events.WorkStatus) bool { return s.Cluster == c.Name && live(s) }) {
			all = false // a target that has not reported yet
		}
	}
	st := map[string]any{}
	switch kind {
	case "Deployment", "StatefulSet", "ReplicaSet":
		st["replicas"], st["readyReplicas"], st["availableReplicas"] = replicas, ready, available
		if kind == "StatefulSet" {
			st["currentReplicas"], st["updatedReplicas"] = min(currentReplicas, replicas), updated
		} else {
			st["updatedReplicas"] = updated
		}
		if unavailable > 0 && kind == "Deployment" {
			st["unavailableReplicas"] = unavailable
		}
	case "DaemonSet":
		st["desiredNumberScheduled"], st["currentNumberScheduled"] = replicas, currentReplicas
		st["numberReady"], st["numberAvailable"], st["updatedNumberScheduled"] = ready, available, updated
		st["numberMisscheduled"] = int64(0)
	default:
		return nil, false
	}
	if all {
		st["observedGeneration"] = hubGeneration
	}
	return st, true
}

// Binding is the ResourceBinding (or ClusterResourceBinding, for a
// cluster-scoped template) hubd writes for the placed template t: where it
// runs, whether it is scheduled and fully applied, and why not. ref is the
// template on the hub.
func Binding(t readmodel.Template, ref ObjectReference, now metav1.Time) ResourceBinding {
	p := t.Placement
	rb := ResourceBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: BindingAPIVersion, Kind: "ResourceBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: BindingName(ref.Kind, ref.Name), Namespace: ref.Namespace, Labels: map[string]string{ManagedByLabel: ManagedByHubd}},
		Spec:       ResourceBindingSpec{Resource: ref, SchedulerName: "flotilla"},
		Status:     ResourceBindingStatus{SchedulerObservedGeneration: p.Generation},
	}
	if ref.Namespace == "" {
		rb.Kind = "ClusterResourceBinding"
	}
	if p.Binding != nil {
		rb.Spec.Replicas = p.Binding.Replicas
	}
	for _, c := range p.Clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, TargetCluster{Name: c.Name, Replicas: c.Replicas})
	}
	rb.Spec.GracefulEvictionTasks = readmodel.EvictionTasks(p)
	rb.Status.Conditions = append(rb.Status.Conditions, scheduled(p, now), fullyApplied(t, now))
	for _, s := range t.Work {
		if !live(s) {
			continue
		}
		it := AggregatedStatusItem{ClusterName: s.Cluster, Status: s.Status, Health: s.Health}
		if applied(s, 0) {
			it.Applied = true
		} else {
			it.AppliedMessage = strings.TrimSpace(s.Phase + ": " + s.Message)
		}
		if it.Health == "" {
			it.Health = events.WorkHealthUnknown
		}
		rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, it)
	}
	sort.Slice(rb.Status.AggregatedStatus, func(i, j int) bool {
		return rb.Status.AggregatedStatus[i].ClusterName < rb.Status.AggregatedStatus[j].ClusterName
	})
	return rb
}

// BindingName is Karmada's binding name: <name>-<lower-case kind>.
func BindingName(kind, name string) string { return name + "-" + strings.ToLower(kind) }

// scheduled is the Scheduled condition: True with the strategy and the
// division, or False with the scheduler's error and every filtered
// cluster's reasons (`flotilla explain` in one message).
func scheduled(p events.PlacementDecision, now metav1.Time) metav1.Condition {
	c := metav1.Condition{Type: ConditionScheduled, ObservedGeneration: p.Generation, LastTransitionTime: now}
	if p.Scheduled && p.Error == "" {
		c.Status, c.Reason = metav1.ConditionTrue, ReasonScheduled
		c.Message = "Binding has been scheduled successfully"
		if p.Division != "" {
			c.Message += ": " + p.Division
		}
		if why := diagnosis(p); why != "" {
			c.Message += "; not elsewhere: " + why
		}
		return c
	}
	c.Status, c.Reason = metav1.ConditionFalse, ReasonNoClusterFit
	msg := p.Error
	if msg == "" {
		msg = "no cluster fits"
	}
	if why := diagnosis(p); why != "" {
		msg += ": " + why
	}
	if p.Generation == 0 && p.Error == "" {
		c.Reason, msg = ReasonSchedulerError, "not placed yet"
	}
	c.Message = msg
	return c
}

// diagnosis lists the clusters the scheduler filtered out with its
// reasons, in name order.
func diagnosis(p events.PlacementDecision) string {
	var names []string
	for n := range p.Diagnosis {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s (%s)", n, strings.Join(p.Diagnosis[n], "; ")))
	}
	return strings.Join(parts, ", ")
}

// fullyApplied is the FullyApplied condition: True once every target
// cluster holds the current generation, else False naming the clusters
// that do not and what they report.
func fullyApplied(t readmodel.Template, now metav1.Time) metav1.Condition {
	p := t.Placement
	c := metav1.Condition{Type: ConditionFullyApplied, ObservedGeneration: p.Generation, LastTransitionTime: now}
	var missing []string
	for _, tc := range p.Clusters {
		i := slices.IndexFunc(t.Work, func(s events.WorkStatus) bool { return s.Cluster == tc.Name && live(s) })
		switch {
		case i < 0:
			missing = append(missing, tc.Name+": not reported yet")
		case !applied(t.Work[i], p.Generation):
			phase, msg := t.Phase(t.Work[i])
			missing = append(missing, strings.TrimSuffix(tc.Name+": "+phase+" "+msg, " "))
		}
	}
	if len(missing) == 0 && len(p.Clusters) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, ReasonFullyApplied, "All works have been successfully applied"
		return c
	}
	c.Status, c.Reason = metav1.ConditionFalse, ReasonNotFullyApplied
	c.Message = "Failed to apply all works, see status.aggregatedStatus for details"
	if len(missing) > 0 {
		c.Message = "not applied in " + strings.Join(missing, "; ")
	}
	return c
}

// KeepTransitions gives each condition of next whose type had the same
// status in previous that condition's lastTransitionTime: a condition's
// time says when its status last changed, not when hubd last wrote it.
func KeepTransitions(previous, next []metav1.Condition) []metav1.Condition {
	out := slices.Clone(next)
	for i, c := range out {
		for _, p := range previous {
			if p.Type == c.Type && p.Status == c.Status {
				out[i].LastTransitionTime = p.LastTransitionTime
			}
		}
	}
	return out
}

// reflected is the member's reflected status field (workload, or
// daemonSet for a DaemonSet's name of it) when the work carries it, else
// fallback.
func reflected(s events.WorkStatus, workload, daemonSet string, fallback int64) int64 {
	for _, f := range []string{workload, daemonSet} {
		if _, ok := s.Status[f]; ok {
			return number(s.Status, f)
		}
	}
	return fallback
}
