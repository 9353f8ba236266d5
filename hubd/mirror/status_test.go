package mirror

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/readmodel"
)

var key = events.KeyOf("apps/v1", "Deployment", "default", "my-app")

// template is my-app placed 3/2/1 at generation 2, with the given work.
func template(work ...events.WorkStatus) readmodel.Template {
	p := events.PlacementDecision{Key: key, Generation: 2, Scheduled: true, Division: "Weighted 3:2:1",
		Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 3}, {Name: "cluster2", Replicas: 2}, {Name: "cluster3", Replicas: 1}},
		Binding:  &events.Binding{Key: key, Replicas: 6}}
	return readmodel.Fleet{Decisions: []events.PlacementDecision{p}, Work: readmodel.Work{Items: work}}.Template(key)
}

// hubObject is the template on the hub at generation 7, with status.
func hubObject(apiVersion, kind string, status map[string]any) map[string]any {
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "my-app", "namespace": "default", "generation": int64(7)}}
	if status != nil {
		obj["status"] = status
	}
	return obj
}

func running(cluster string, generation int64, replicas, ready int32) events.WorkStatus {
	return events.WorkStatus{Key: key, Cluster: cluster, Generation: generation, Phase: events.WorkRunning, ObservedGeneration: 1,
		Replicas: replicas, ReadyReplicas: ready, AvailableReplicas: ready, UnavailableReplicas: replicas - ready}
}

// scalingDown is a member whose spec says replicas while its status still
// counts the pods it had: all of them ready and updated.
func scalingDown(cluster string, replicas, had int32) events.WorkStatus {
	s := running(cluster, 2, replicas, had)
	s.UnavailableReplicas = 0
	s.Status = map[string]any{"replicas": int64(had), "updatedReplicas": int64(had), "readyReplicas": int64(had), "availableReplicas": int64(had)}
	return s
}

func TestTemplateStatusSumsTheMembersAsKarmadasDefaultInterpreter(t *testing.T) {
	cases := []struct {
		name    string
		kind    string
		t       readmodel.Template
		current bool
		want    map[string]any
		wantOK  bool
	}{
		{"every member runs the current generation: READY 6/6 and the hub's generation observed", "Deployment",
			template(running("cluster1", 2, 3, 3), running("cluster2", 2, 2, 2), running("cluster3", 2, 1, 1)), true,
			map[string]any{"replicas": int64(6), "readyReplicas": int64(6), "availableReplicas": int64(6), "updatedReplicas": int64(6), "observedGeneration": int64(7)}, true},
		{"a member not reported yet: counts so far, no observedGeneration", "Deployment",
			template(running("cluster1", 2, 3, 3), running("cluster2", 2, 2, 1)), true,
			map[string]any{"replicas": int64(5), "readyReplicas": int64(4), "availableReplicas": int64(4), "updatedReplicas": int64(4), "unavailableReplicas": int64(1)}, true},
		{"the bus holds an older template than the hub: no observedGeneration", "Deployment",
			template(running("cluster1", 2, 3, 3), running("cluster2", 2, 2, 2), running("cluster3", 2, 1, 1)), false,
			map[string]any{"replicas": int64(6), "readyReplicas": int64(6), "availableReplicas": int64(6), "updatedReplicas": int64(6)}, true},
		{"a member still on the previous generation: its ready replicas are not updated ones", "Deployment",
			template(running("cluster1", 1, 3, 3), running("cluster2", 2, 2, 2), running("cluster3", 2, 1, 1)), true,
			map[string]any{"replicas": int64(6), "readyReplicas": int64(6), "availableReplicas": int64(6), "updatedReplicas": int64(3)}, true},
		{"a scale-down in progress: the members' status replicas are summed, not their spec's, so ready and updated never exceed replicas (the API server refuses that)", "Deployment",
			template(scalingDown("cluster1", 1, 3), running("cluster2", 2, 2, 2), running("cluster3", 2, 1, 1)), true,
			map[string]any{"replicas": int64(6), "readyReplicas": int64(6), "availableReplicas": int64(6), "updatedReplicas": int64(6), "observedGeneration": int64(7)}, true},
		{"a kind without replicas and without a statusAggregation script keeps its status", "ConfigMap",
			template(running("cluster1", 2, 0, 0)), true, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := TemplateStatus(hubObject("apps/v1", c.kind, nil), c.t, c.current)
			if ok != c.wantOK {
				t.Fatalf("ok = %v, want %v", ok, c.wantOK)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBindingSaysWhereItRunsAndWhyNotFullyApplied(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC))
	ref := ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "my-app"}
	unfit := readmodel.Fleet{Decisions: []events.PlacementDecision{{Key: key, Generation: 1, Error: "no cluster fits",
		Diagnosis: map[string][]string{"cluster2": {"ClusterAffinity: not in clusterNames"}, "cluster1": {"TaintToleration: untolerated taint"}}}}}.Template(key)
	cases := []struct {
		name                           string
		t                              readmodel.Template
		wantScheduled, wantApplied     metav1.ConditionStatus
		wantClusters                   []TargetCluster
		wantScheduledIn, wantAppliedIn string
	}{
		{"placed and running everywhere", template(running("cluster1", 2, 3, 3), running("cluster2", 2, 2, 2), running("cluster3", 2, 1, 1)),
			metav1.ConditionTrue, metav1.ConditionTrue, []TargetCluster{{"cluster1", 3}, {"cluster2", 2}, {"cluster3", 1}},
			"Weighted 3:2:1", "successfully applied"},
		{"placed, one cluster has not reported", template(running("cluster1", 2, 3, 3), running("cluster2", 2, 2, 2)),
			metav1.ConditionTrue, metav1.ConditionFalse, []TargetCluster{{"cluster1", 3}, {"cluster2", 2}, {"cluster3", 1}},
			"Weighted 3:2:1", "cluster3: not reported yet"},
		{"no cluster fits: every filtered cluster with its reason, in name order", unfit,
			metav1.ConditionFalse, metav1.ConditionFalse, nil,
			"no cluster fits: cluster1 (TaintToleration: untolerated taint), cluster2 (ClusterAffinity: not in clusterNames)", "Failed to apply"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rb := Binding(c.t, ref, now)
			if rb.Name != "my-app-deployment" || rb.Kind != "ResourceBinding" {
				t.Errorf("binding %s %s, want ResourceBinding my-app-deployment", rb.Kind, rb.Name)
			}
			if diff := cmp.Diff(c.wantClusters, rb.Spec.Clusters); diff != "" {
				t.Errorf("spec.clusters (-want +got):\n%s", diff)
			}
			conds := map[string]metav1.Condition{}
			for _, cond := range rb.Status.Conditions {
				conds[cond.Type] = cond
			}
			if s := conds[ConditionScheduled]; s.Status != c.wantScheduled || !strings.Contains(s.Message, c.wantScheduledIn) {
				t.Errorf("Scheduled = %s %q, want %s containing %q", s.Status, s.Message, c.wantScheduled, c.wantScheduledIn)
			}
			if a := conds[ConditionFullyApplied]; a.Status != c.wantApplied || !strings.Contains(a.Message, c.wantAppliedIn) {
				t.Errorf("FullyApplied = %s %q, want %s containing %q", a.Status, a.Message, c.wantApplied, c.wantAppliedIn)
			}
		})
	}
}

func TestKeepTransitionsMovesTheTimeOnlyWhenTheStatusChanges(t *testing.T) {
	then, now := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	previous := []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue, LastTransitionTime: then},
		{Type: "FullyApplied", Status: metav1.ConditionFalse, LastTransitionTime: then}}
	next := []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue, LastTransitionTime: now},
		{Type: "FullyApplied", Status: metav1.ConditionTrue, LastTransitionTime: now}}
	want := []metav1.Condition{{Type: "Scheduled", Status: metav1.ConditionTrue, LastTransitionTime: then},
		{Type: "FullyApplied", Status: metav1.ConditionTrue, LastTransitionTime: now}}
	if diff := cmp.Diff(want, KeepTransitions(previous, next)); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}

func TestClusterStatusReadsHealthdsReports(t *testing.T) {
	since := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	now := metav1.NewTime(since.Add(time.Hour))
	ready := readmodel.Cluster{Registration: events.ClusterRegistration{Name: "cluster1"},
		Health:   &events.ClusterHealth{Cluster: "cluster1", Ready: true, State: "Ready", Since: since},
		Capacity: &events.ClusterCapacity{Cluster: "cluster1", KubernetesVersion: "v1.37.2", Nodes: 1, ReadyNodes: 1}}
	cases := []struct {
		name        string
		c           readmodel.Cluster
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantVersion string
	}{
		{"a Ready member: Ready True since healthd saw it so, its version", ready, metav1.ConditionTrue, "ClusterReady", "v1.37.2"},
		{"an unreachable member: Ready False with the state as reason", readmodel.Cluster{Registration: events.ClusterRegistration{Name: "cluster2"},
			Health: &events.ClusterHealth{Cluster: "cluster2", State: "Unreachable", Message: "dial tcp: refused"}}, metav1.ConditionFalse, "ClusterUnreachable", ""},
		{"an unreachable member with healthd's conditions: Ready Unknown, as healthd and flotilla get clusters have it", readmodel.Cluster{Registration: events.ClusterRegistration{Name: "cluster2"},
			Health: &events.ClusterHealth{Cluster: "cluster2", State: "Unreachable", Message: "dial tcp: refused",
				Conditions: []events.ClusterCondition{{Type: "Ready", Status: "Unknown", Reason: "ClusterUnreachable", Message: "dial tcp: refused", LastTransitionTime: since}}}},
			metav1.ConditionUnknown, "ClusterUnreachable", ""},
		{"a member healthd has not reported on: Unknown", readmodel.Cluster{Registration: events.ClusterRegistration{Name: "cluster3"}}, metav1.ConditionUnknown, "NotReported", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := ClusterStatus(c.c, now)
			r := st.Conditions[0]
			if r.Type != "Ready" || r.Status != c.wantStatus || r.Reason != c.wantReason || st.KubernetesVersion != c.wantVersion {
				t.Errorf("got %s=%s (%s), version %q; want Ready=%s (%s), version %q", r.Type, r.Status, r.Reason, st.KubernetesVersion, c.wantStatus, c.wantReason, c.wantVersion)
			}
		})
	}
	if got := ClusterStatus(ready, now).Conditions[0].LastTransitionTime.Time; !got.Equal(since) {
		t.Errorf("Ready's lastTransitionTime = %s, want healthd's since %s", got, since)
	}
}

// A failover's evictions are the hub binding's gracefulEvictionTasks, as
// `flotilla get rb -o yaml` shows them (readmodel.EvictionTasks).
func TestBindingCarriesTheEvictionsAsGracefulEvictionTasks(t *testing.T) {
	at := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	p := events.PlacementDecision{Key: key, Generation: 2, Scheduled: true,
		Clusters: []events.TargetCluster{{Name: "cluster2", Replicas: 3}, {Name: "cluster3", Replicas: 3}},
		Evictions: []events.Eviction{{Cluster: "cluster1", Reason: "ApplicationFailure", Message: "unhealthy", PurgeMode: events.PurgeGracefully,
			GracePeriodSeconds: 600, Replicas: 2, EvictedAt: at}},
		Binding: &events.Binding{Key: key, Replicas: 6}}
	rb := Binding(readmodel.Fleet{Decisions: []events.PlacementDecision{p}}.Template(key), ObjectReference{Kind: "Deployment", Namespace: "default", Name: "my-app"}, metav1.NewTime(at))
	want := []readmodel.GracefulEvictionTask{{FromCluster: "cluster1", Replicas: 2, Reason: "ApplicationFailure", Message: "unhealthy", Producer: "flotilla",
		PurgeMode: events.PurgeGracefully, GracePeriodSeconds: 600, CreationTimestamp: metav1.NewTime(at)}}
	if diff := cmp.Diff(want, rb.Spec.GracefulEvictionTasks); diff != "" {
		t.Errorf("spec.gracefulEvictionTasks (-want +got):\n%s", diff)
	}
}
