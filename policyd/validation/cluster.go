package validation

import (
	"maps"
	"net/url"
	"reflect"
	"slices"

	"github.com/flotilla-io/flotilla/events/policy"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"
)

func checkCluster(obj map[string]any, rep *report) {
	var c policy.Cluster
	if !decode(obj, &c, "", rep) {
		return
	}
	s := &c.Spec
	rep.enum("spec.syncMode", s.SyncMode, policy.SyncModePush, policy.SyncModePull)
	checkURL(s.APIEndpoint, "spec.apiEndpoint", rep)
	checkURL(s.ProxyURL, "spec.proxyURL", rep)
	if s.SecretRef != nil && s.SecretRef.Name == "" {
		rep.required("spec.secretRef.name")
	}
	if s.ImpersonatorSecretRef != nil && s.ImpersonatorSecretRef.Name == "" {
		rep.required("spec.impersonatorSecretRef.name")
	}
	if s.Zone != "" && len(s.Zones) > 0 {
		rep.warnf("spec.zone", "deprecated: zones is set and wins over zone")
	}
	for i, t := range s.Taints {
		tp := idx("spec.taints", i)
		if t.Key == "" {
			rep.required(tp + ".key")
		} else {
			for _, msg := range kvalidation.IsQualifiedName(t.Key) {
				rep.errorf(tp+".key", "invalid value %q: %s", t.Key, msg)
			}
		}
		for _, msg := range kvalidation.IsValidLabelValue(t.Value) {
			rep.errorf(tp+".value", "invalid value %q: %s", t.Value, msg)
		}
		if t.Effect == "" {
			rep.required(tp + ".effect")
		}
		rep.enum(tp+".effect", string(t.Effect), "NoSchedule", "PreferNoSchedule", "NoExecute")
	}
	checkClusterStatus(&c.Status, rep)
}

// checkClusterStatus judges what flotilla simulate reads of a status
// (healthd writes a joined cluster's own): each condition's type and
// status, and the resource summary's quantities, none of them negative.
func checkClusterStatus(st *policy.ClusterStatus, rep *report) {
	for i, c := range st.Conditions {
		cp := idx("status.conditions", i)
		if c.Type == "" {
			rep.required(cp + ".type")
		}
		if c.Status == "" {
			rep.required(cp + ".status")
		}
		rep.enum(cp+".status", string(c.Status), string(metav1.ConditionTrue), string(metav1.ConditionFalse), string(metav1.ConditionUnknown))
	}
	if rs := st.ResourceSummary; rs != nil {
		for _, f := range []struct {
			name string
			list corev1.ResourceList
		}{{"allocatable", rs.Allocatable}, {"allocating", rs.Allocating}, {"allocated", rs.Allocated}} {
			for _, name := range slices.Sorted(maps.Keys(f.list)) {
				if q := f.list[name]; q.Sign() < 0 {
					rep.errorf("status.resourceSummary."+f.name+"["+string(name)+"]", "invalid value %q: must not be negative", q.String())
				}
			}
		}
	}
}

func checkURL(raw, p string, rep *report) {
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		rep.errorf(p, "invalid value %q: must be an http or https URL", raw)
	}
}

// resourceBinding is the part of Karmada's work.karmada.io/v1alpha2
// ResourceBinding that `flotilla simulate` reads. Its spec and status are
// open: fields not listed here are accepted as they are.
type resourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              bindingSpec   `json:"spec"`
	Status            bindingStatus `json:"status,omitempty"`
}

type bindingSpec struct {
	Resource              bindingResource        `json:"resource"`
	Replicas              int32                  `json:"replicas,omitempty"`
	Clusters              []bindingTarget        `json:"clusters,omitempty"`
	RescheduleTriggeredAt *metav1.Time           `json:"rescheduleTriggeredAt,omitempty"`
	GracefulEvictionTasks []gracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`
	// Read as placed workloads (peers, quota usage) by flotilla simulate.
	ReplicaRequirements    *bindingRequirements           `json:"replicaRequirements,omitempty"`
	Components             []policy.Component             `json:"components,omitempty"`
	WorkloadAffinityGroups *policy.WorkloadAffinityGroups `json:"workloadAffinityGroups,omitempty"`
}

type bindingRequirements struct {
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
}

type bindingResource struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
}

type bindingTarget struct {
	Name     string `json:"name"`
	Replicas int32  `json:"replicas,omitempty"`
}

type gracefulEvictionTask struct {
	FromCluster        string       `json:"fromCluster"`
	PurgeMode          string       `json:"purgeMode,omitempty"`
	Replicas           *int32       `json:"replicas,omitempty"`
	Reason             string       `json:"reason,omitempty"`
	Message            string       `json:"message,omitempty"`
	Producer           string       `json:"producer,omitempty"`
	GracePeriodSeconds *int32       `json:"gracePeriodSeconds,omitempty"`
	SuppressDeletion   *bool        `json:"suppressDeletion,omitempty"`
	CreationTimestamp  *metav1.Time `json:"creationTimestamp,omitempty"`
}

type bindingStatus struct {
	SchedulerObservedGeneration int64        `json:"schedulerObservedGeneration,omitempty"`
	LastScheduledTime           *metav1.Time `json:"lastScheduledTime,omitempty"`
}

// openTypes accept unknown fields (copied as they are).
var openTypes = map[reflect.Type]bool{
	reflect.TypeFor[bindingSpec]():          true,
	reflect.TypeFor[bindingResource]():      true,
	reflect.TypeFor[gracefulEvictionTask](): true,
	reflect.TypeFor[bindingStatus]():        true,
	// nodeClaim, namespace, priorityClassName: accepted, not read.
	reflect.TypeFor[bindingRequirements]():          true,
	reflect.TypeFor[policy.ComponentRequirements](): true,
}

func checkBinding(obj map[string]any, rep *report) {
	var rb resourceBinding
	if !decode(obj, &rb, "", rep) {
		return
	}
	r := rb.Spec.Resource
	if r.APIVersion == "" {
		rep.required("spec.resource.apiVersion")
	}
	if r.Kind == "" {
		rep.required("spec.resource.kind")
	}
	if r.Name == "" {
		rep.required("spec.resource.name")
	}
	if rb.Spec.Replicas < 0 {
		rep.errorf("spec.replicas", "invalid value %d: must be greater than or equal to 0", rb.Spec.Replicas)
	}
	seen := map[string]int{}
	for i, c := range rb.Spec.Clusters {
		cp := idx("spec.clusters", i)
		if c.Name == "" {
			rep.required(cp + ".name")
		} else if first, dup := seen[c.Name]; dup {
			rep.errorf(cp+".name", "duplicate value %q: spec.clusters[%d] names it already", c.Name, first)
		} else {
			seen[c.Name] = i
		}
		if c.Replicas < 0 {
			rep.errorf(cp+".replicas", "invalid value %d: must be greater than or equal to 0", c.Replicas)
		}
	}
	for i, t := range rb.Spec.GracefulEvictionTasks {
		if t.FromCluster == "" {
			rep.required(idx("spec.gracefulEvictionTasks", i) + ".fromCluster")
		}
	}
}
