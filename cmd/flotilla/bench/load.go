package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/validation"
)

// The bench's load: simulated members, the policy and templates, and reading placements back.

func benchEvent(t events.Type, subject string, data any) (events.Event, error) {
	return events.New(t, benchSource, subject, data)
}

func publishBenchClusters(ctx context.Context, bus *natsbus.Bus, n int) error {
	es, err := benchClusters(n)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := bus.PublishAsync(e.subject, e.event); err != nil {
			return err
		}
	}
	return bus.Flush(ctx)
}

// subjected is an event and the subject it is published on.
type subjected struct {
	subject string
	event   events.Event
}

// benchClusters is what the bench's n simulated members report: each one's
// registration, health and capacity.
func benchClusters(n int) ([]subjected, error) {
	var out []subjected
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	now := time.Now().UTC()
	for i := range n {
		name := fmt.Sprintf("member-%03d", i)
		region := fmt.Sprintf("r%d", i%10)
		reg := events.ClusterRegistration{Name: name, Generation: 1,
			Labels: map[string]string{benchLabel: "true", "region": region},
			Spec:   policy.ClusterSpec{APIEndpoint: "https://" + name + ".bench.invalid:6443", SyncMode: "Push", Provider: "bench", Region: region}}
		health := events.ClusterHealth{Cluster: name, Ready: true, State: events.ClusterStateReady, Reason: "ClusterReady", Since: now, ObservedAt: now,
			Conditions: []events.ClusterCondition{{Type: policy.ClusterConditionReady, Status: "True", Reason: "ClusterReady", LastTransitionTime: now}}}
		// Room for 10,000 templates of 10-19 replicas (100m, 128Mi) with
		// every placement reserved (nothing reports the replicas running):
		// 100 × 2,200 pods against ~145,000 replicas.
		capacity := events.ClusterCapacity{Cluster: name, KubernetesVersion: "v1.37.2", Nodes: 20, ReadyNodes: 20,
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: q(strconv.Itoa(320 + 32*(i%8))), corev1.ResourceMemory: q("1280Gi"), corev1.ResourcePods: q("2200")},
			Allocated:   corev1.ResourceList{corev1.ResourceCPU: q("40"), corev1.ResourceMemory: q("128Gi"), corev1.ResourcePods: q("240")},
			APIEnablements: []policy.APIEnablement{
				{GroupVersion: "apps/v1", Resources: []policy.APIResource{{Name: "deployments", Kind: "Deployment"}, {Name: "statefulsets", Kind: "StatefulSet"}}},
				{GroupVersion: "v1", Resources: []policy.APIResource{{Name: "configmaps", Kind: "ConfigMap"}, {Name: "services", Kind: "Service"}}},
			},
			ObservedAt: now}
		for _, p := range []struct {
			t       events.Type
			subject string
			data    any
		}{
			{events.TypeClusterRegistered, events.MemberSubject(name), reg},
			{events.TypeClusterHealthChanged, events.HealthSubject(name), health},
			{events.TypeClusterCapacityReported, events.CapacitySubject(name), capacity},
		} {
			e, err := benchEvent(p.t, name, p.data)
			if err != nil {
				return nil, err
			}
			out = append(out, subjected{p.subject, e})
		}
	}
	return out, nil
}

// benchPolicy is the one PropagationPolicy: every Deployment of the bench
// namespace, on every bench cluster, with the strategy asked for.
func benchPolicy(strategy string) (map[string]any, error) {
	rs := map[string]any{}
	switch strategy {
	case "duplicated":
		rs["replicaSchedulingType"] = policy.ReplicaSchedulingTypeDuplicated
	case "dynamic":
		rs["replicaSchedulingType"] = policy.ReplicaSchedulingTypeDivided
		rs["replicaDivisionPreference"] = policy.DivisionPreferenceWeighted
		rs["weightPreference"] = map[string]any{"dynamicWeight": policy.DynamicWeightAvailableReplicas}
	default:
		var list []any
		for r := range 10 {
			list = append(list, map[string]any{
				"targetCluster": map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"region": fmt.Sprintf("r%d", r)}}},
				"weight":        int64(r%3 + 1),
			})
		}
		rs["replicaSchedulingType"] = policy.ReplicaSchedulingTypeDivided
		rs["replicaDivisionPreference"] = policy.DivisionPreferenceWeighted
		rs["weightPreference"] = map[string]any{"staticWeightList": list}
	}
	obj := map[string]any{
		"apiVersion": policy.PolicyAPIVersion,
		"kind":       policy.KindPropagationPolicy,
		"metadata":   map[string]any{"name": "bench", "namespace": benchNamespace},
		"spec": map[string]any{
			"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}},
			"placement": map[string]any{
				"clusterAffinity":   map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{benchLabel: "true"}}},
				"replicaScheduling": rs,
			},
		},
	}
	return validated(obj)
}

func benchTemplate(name string, replicas int64) (map[string]any, error) {
	labels := map[string]any{"app": name}
	obj := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": benchNamespace, "labels": labels},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "app", "image": "nginx:1.25.3",
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}},
				}}},
			},
		},
	}
	return validated(obj)
}

// validated runs policyd's validator, as flotilla apply does before publishing.
func validated(obj map[string]any) (map[string]any, error) {
	doc, errs, _ := validation.ValidateObject(obj)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = validation.Format(e)
		}
		return nil, fmt.Errorf("bench object invalid: %s", strings.Join(msgs, "; "))
	}
	return doc.Object, nil
}

func publishApplied(bus *natsbus.Bus, obj map[string]any) error {
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	k := events.KeyOf(av, kind, ns, name)
	e, err := events.New(events.TypeObjectApplied, benchSource, k.String(), obj)
	if err != nil {
		return err
	}
	return bus.PublishAsync(events.InputSubject(k), e)
}

func latestPlacement(ctx context.Context, bus *natsbus.Bus, k events.ObjectKey) (events.PlacementDecision, error) {
	var p events.PlacementDecision
	ms, err := bus.LatestPerSubject(ctx, events.StreamPlacement, events.PlacementSubject(k))
	if err != nil {
		return p, err
	}
	if len(ms) == 0 || ms[len(ms)-1].Err != nil {
		return p, fmt.Errorf("no placement for %s", k)
	}
	return p, events.Decode(ms[len(ms)-1].Event, &p)
}

// ---- observing placements ----

// placementState returns how many subjects of the placement stream hold a
// placement, and the stream's last sequence.
func placementState(ctx context.Context, bus *natsbus.Bus) (uint64, uint64, error) {
	st, err := bus.StreamState(ctx, events.StreamPlacement)
	return st.Subjects, st.LastSeq, err
}

// waitPlacements polls the placement stream until n subjects hold a
// placement. It reads no message: the run is measured from the storage
// times afterwards (placementTimes), so observing costs the machine next
// to nothing.
func waitPlacements(ctx context.Context, bus *natsbus.Bus, ds *benchDaemons, n uint64, within time.Duration, progress func(uint64)) (uint64, error) {
	deadline := time.Now().Add(within)
	for {
		got, _, err := placementState(ctx, bus)
		if err == nil && got >= n {
			return got, nil
		}
		if progress != nil {
			progress(got)
		}
		if time.Now().After(deadline) {
			return got, fmt.Errorf("timed out after %s", within)
		}
		select {
		case err := <-ds.exited:
			return got, fmt.Errorf("a daemon exited: %v", err)
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}

// placementTimes reads the placement stream from sequence from on and
// returns, for each template of index, the storage time of its first
// placement (zero if none). It reads subjects and metadata only.
func placementTimes(ctx context.Context, bus *natsbus.Bus, index map[string]int, from uint64) ([]time.Time, error) {
	out := make([]time.Time, len(index))
	_, last, err := placementState(ctx, bus)
	if err != nil || last < from {
		return out, err
	}
	// A loaded cluster sometimes delivers nothing to a new ordered consumer
	// for the read's five seconds: the read is tried again, from the start.
	for try := 0; ; try++ {
		err = bus.StorageTimes(ctx, events.StreamPlacement, events.AllPlacements, from, last, func(subject string, stored time.Time) bool {
			if i, ok := index[subject]; ok && out[i].IsZero() {
				out[i] = stored
			}
			return true
		})
		if err == nil || try == 2 || ctx.Err() != nil {
			return out, err
		}
	}
}

// ---- the daemons ----
