package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/readmodel"
)

// The recorded events the get, describe and explain tests print: what the
// streams hold after a policy placed my-app over three clusters, cluster3
// became unreachable and failover moved its replicas away (keeping the old
// copy), and web's copy in cluster1 was evicted and purged.

// recordedAt is when everything happened; the tests' clock stands three
// days later.
var recordedAt = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

var (
	appKey    = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "my-app"}
	svcKey    = events.ObjectKey{Kind: "Service", Namespace: "default", Name: "my-app"}
	webKey    = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}
	nsKey     = events.ObjectKey{Kind: "Namespace", Name: "shop"}
	policyKey = events.ObjectKey{Group: "policy.karmada.io", Kind: "PropagationPolicy", Namespace: "default", Name: "my-app-policy"}
)

// recordedEvent is one event with the subject it was stored on.
type recordedEvent struct {
	subject string
	event   events.Event
}

func recorded(t *testing.T) []recordedEvent {
	t.Helper()
	var out []recordedEvent
	add := func(typ events.Type, subject string, data any) {
		t.Helper()
		e, err := events.New(typ, "/test", subject, data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recordedEvent{subject, e})
	}
	ref := &events.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "my-app-policy"}
	add(events.TypeObjectAccepted, events.ObjectSubject(policyKey), events.ObjectRecord{Key: policyKey, APIVersion: "policy.karmada.io/v1alpha1", Generation: 1, Role: events.RolePolicy, UpdatedAt: recordedAt})
	add(events.TypeObjectAccepted, events.ObjectSubject(svcKey), events.ObjectRecord{Key: svcKey, APIVersion: "v1", Generation: 2, Role: events.RoleTemplate, UpdatedAt: recordedAt,
		Warnings: []string{"spec.ports[0].name: empty"}})
	add(events.TypeObjectAccepted, events.ObjectSubject(nsKey), events.ObjectRecord{Key: nsKey, APIVersion: "v1", Generation: 1, Role: events.RoleTemplate, UpdatedAt: recordedAt})
	add(events.TypeBindingChanged, events.BindingSubject(appKey), events.Binding{Key: appKey, APIVersion: "apps/v1", Generation: 3, Revision: 4, Policy: ref, Replicas: 6,
		Template: []byte(`{"apiVersion":"apps/v1","kind":"Deployment"}`), AcceptedAt: recordedAt})
	add(events.TypeBindingChanged, events.BindingSubject(webKey), events.Binding{Key: webKey, APIVersion: "apps/v1", Generation: 1, Revision: 1,
		Policy: &events.PolicyRef{Kind: "PropagationPolicy", Namespace: "shop", Name: "gone"}, Template: []byte(`{"apiVersion":"apps/v1","kind":"Deployment"}`), AcceptedAt: recordedAt})

	cpu := func(s string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	}
	for i, name := range []string{"cluster1", "cluster2", "cluster3"} {
		add(events.TypeClusterRegistered, events.MemberSubject(name), events.ClusterRegistration{Name: name, Generation: 1, Labels: map[string]string{"region": []string{"eu", "eu", "us"}[i], "tier": "prod"},
			Spec: policy.ClusterSpec{APIEndpoint: "https://" + name + ":6443", Provider: "kind", Region: []string{"eu", "eu", "us"}[i], Zones: []string{"a"}}})
		add(events.TypeClusterCapacityReported, events.CapacitySubject(name), events.ClusterCapacity{Cluster: name, KubernetesVersion: "v1.31.0", Nodes: 3, ReadyNodes: int32(3 - i),
			Allocatable: cpu("8"), Allocated: cpu("2"), ObservedAt: recordedAt})
	}
	ready := func(name string) events.ClusterHealth {
		return events.ClusterHealth{Cluster: name, Ready: true, State: events.ClusterStateReady, Reason: "ClusterReady", Since: recordedAt, ObservedAt: recordedAt,
			Conditions: []events.ClusterCondition{{Type: policy.ClusterConditionReady, Status: "True", Reason: "ClusterReady", Message: "ok", LastTransitionTime: recordedAt}}}
	}
	add(events.TypeClusterHealthChanged, events.HealthSubject("cluster1"), ready("cluster1"))
	add(events.TypeClusterHealthChanged, events.HealthSubject("cluster2"), ready("cluster2"))
	add(events.TypeClusterHealthChanged, events.HealthSubject("cluster3"), events.ClusterHealth{Cluster: "cluster3", State: events.ClusterStateUnreachable, Reason: "ClusterUnreachable",
		Message: "dial tcp: connection refused", Since: recordedAt.Add(time.Hour), ObservedAt: recordedAt.Add(time.Hour),
		Taints: []corev1.Taint{{Key: policy.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule}}})

	add(events.TypePlacementDecided, events.PlacementSubject(appKey), events.PlacementDecision{Key: appKey, Generation: 3, BindingRevision: 4, Scheduled: true,
		Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 4}, {Name: "cluster2", Replicas: 2}}, Strategy: "Divided/Weighted",
		Feasible: []string{"cluster1", "cluster2"}, Diagnosis: map[string][]string{"cluster3": {"TaintToleration: cluster3 has taint cluster.karmada.io/unreachable:NoSchedule"}},
		Scores: events.ScoresOf(map[string]int64{"cluster1": 100, "cluster2": 50}), Division: "6 replicas by static weight 2:1", DecidedAt: recordedAt.Add(2 * time.Hour),
		Binding:   &events.Binding{Key: appKey, Policy: ref, Replicas: 6},
		Evictions: []events.Eviction{{Cluster: "cluster3", Reason: events.EvictTaintUntolerated, Message: "cluster3 is unreachable", PurgeMode: events.PurgeGracefully, Replicas: 2, EvictedAt: recordedAt.Add(2 * time.Hour)}}})
	purgedAt := recordedAt.Add(3 * time.Hour)
	add(events.TypePlacementDecided, events.PlacementSubject(webKey), events.PlacementDecision{Key: webKey, Generation: 1, BindingRevision: 1, Scheduled: true,
		Clusters: []events.TargetCluster{{Name: "cluster2", Replicas: 1}}, Strategy: "Duplicated", Feasible: []string{"cluster2"}, DecidedAt: recordedAt.Add(3 * time.Hour),
		Evictions: []events.Eviction{{Cluster: "cluster1", Reason: events.EvictApplicationFailure, PurgeMode: events.PurgeGracefully, EvictedAt: recordedAt, PurgedAt: &purgedAt, PurgeReason: "replacement healthy"}}})
	add(events.TypePlacementRemoved, events.PlacementSubject(svcKey), events.PlacementDecision{Key: svcKey})

	work := func(key events.ObjectKey, cluster, phase string, ready, replicas int32) {
		add(events.TypeWorkStatusChanged, events.WorkSubject(cluster, key), events.WorkStatus{Key: key, Cluster: cluster, Generation: 3, BindingRevision: 4, Phase: phase,
			ReadyReplicas: ready, Replicas: replicas, ObservedGeneration: 2, Health: events.WorkHealthy, AppliedOverrides: []string{"default/tag-images"},
			CreatedAt: recordedAt, UpdatedAt: recordedAt.Add(4 * time.Hour)})
	}
	work(appKey, "cluster1", events.WorkRunning, 4, 4)
	work(appKey, "cluster3", events.WorkRunning, 2, 2)
	work(webKey, "cluster1", events.WorkRunning, 1, 1)
	work(svcKey, "cluster2", events.WorkApplied, 0, 0)
	return out
}

// recordedOn returns the events stored on subjects matching filter, in
// order, as the streams hand them over (stored at recordedAt).
func recordedOn(t *testing.T, filters ...string) []readmodel.Stored {
	t.Helper()
	var out []readmodel.Stored
	for i, r := range recorded(t) {
		for _, f := range filters {
			if matchesSubject(f, r.subject) {
				out = append(out, readmodel.Stored{Event: r.event, Sequence: uint64(i + 1), Time: recordedAt})
				break
			}
		}
	}
	return out
}

// matchesSubject is NATS subject matching for the filters of these tests
// (literal tokens and a trailing >).
func matchesSubject(filter, subject string) bool {
	if len(filter) > 0 && filter[len(filter)-1] == '>' {
		prefix := filter[:len(filter)-1]
		return len(subject) > len(prefix) && subject[:len(prefix)] == prefix
	}
	return filter == subject
}
