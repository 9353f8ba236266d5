package console

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/readmodel"
)

// The recorded events the console tests show: seed 000's my-app placed
// 3/2/1 over three Ready clusters, then web (6 replicas, Divided 2/2/2)
// moved by failover from cluster1 to cluster2 and cluster3 (3/3) once
// cluster1 became Unreachable.

var recordedAt = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

var (
	myApp  = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "my-app"}
	web    = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}
	seedPP = &events.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "my-app-policy"}
	webPP  = &events.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "web-policy"}
)

// recorder stores events the way a stream does: in order, with a
// sequence per stream and a storage time.
type recorder struct {
	t      *testing.T
	mu     sync.Mutex
	all    []Event
	seq    map[string]uint64
	at     time.Time
	follow []func(Event)
}

func newRecorder(t *testing.T) *recorder {
	return &recorder{t: t, seq: map[string]uint64{}, at: recordedAt}
}

// add stores data as an event of typ on subject, a second after the last.
func (r *recorder) add(typ events.Type, subject string, data any) {
	r.t.Helper()
	e, err := events.New(typ, "/test", subject, data)
	if err != nil {
		r.t.Fatal(err)
	}
	entry, ok := events.Lookup(typ)
	if !ok {
		r.t.Fatalf("%s is in no catalogue row", typ)
	}
	r.mu.Lock()
	r.seq[entry.Stream]++
	r.at = r.at.Add(time.Second)
	ev := Event{Stream: entry.Stream, Subject: subject, Stored: readmodel.Stored{Event: e, Sequence: r.seq[entry.Stream], Time: r.at}}
	r.all = append(r.all, ev)
	follow := append([]func(Event){}, r.follow...)
	r.mu.Unlock()
	for _, fn := range follow {
		fn(ev)
	}
}

func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.all...)
}

// latest is the newest event of every subject of stream matching filter.
func (r *recorder) latest(_ context.Context, stream, filter string) ([]readmodel.Stored, error) {
	last := map[string]int{}
	all := r.events()
	for i, e := range all {
		if e.Stream == stream && subjectMatches(filter, e.Subject) {
			last[e.Subject] = i
		}
	}
	var out []readmodel.Stored
	for i, e := range all {
		if j, ok := last[e.Subject]; ok && j == i {
			out = append(out, e.Stored)
		}
	}
	return out, nil
}

// subjectMatches is NATS subject matching: * one token, > the rest.
func subjectMatches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		if tok == ">" {
			return len(s) > i
		}
		if i >= len(s) || (tok != "*" && tok != s[i]) {
			return false
		}
	}
	return len(f) == len(s)
}

// recordedSource is a Source over a recorder: the read model over the
// recorded rows, as the bus's Source computes it over the streams.
type recordedSource struct {
	r *recorder
	// follows counts the calls of Follow.
	follows int
}

func (s *recordedSource) Fleet(ctx context.Context) (readmodel.Fleet, error) {
	return readmodel.ReadFleet(ctx, s.r.latest)
}

func (s *recordedSource) DeadLetters(context.Context) ([]readmodel.DeadLetter, error) {
	var ms []readmodel.Stored
	for _, e := range s.r.events() {
		if e.Stream == events.StreamDeadLetter {
			ms = append(ms, e.Stored)
		}
	}
	return readmodel.DeadLetters(ms), nil
}

func (s *recordedSource) History(_ context.Context, key events.ObjectKey) ([]Event, error) {
	var out []Event
	for _, e := range s.r.events() {
		for _, f := range HistorySubjects(key) {
			if subjectMatches(f.Filter, e.Subject) {
				out = append(out, e)
				break
			}
		}
	}
	return out, nil
}

func (s *recordedSource) Recent(_ context.Context, limit int) ([]Event, error) {
	all := s.r.events()
	return all[max(0, len(all)-limit):], nil
}

func (s *recordedSource) Follow(_ context.Context, fn func(Event)) error {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.follows++
	s.r.follow = append(s.r.follow, fn)
	return nil
}

// seed000 records seed 000: three Ready clusters and my-app placed 3/2/1.
func seed000(r *recorder) {
	list := func(cpu string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	}
	for _, name := range []string{"cluster1", "cluster2", "cluster3"} {
		r.add(events.TypeClusterRegistered, events.MemberSubject(name), events.ClusterRegistration{Name: name, Generation: 1, Labels: map[string]string{"env": "prod"},
			Spec: policy.ClusterSpec{APIEndpoint: "https://" + name + ":6443"}})
		r.add(events.TypeClusterCapacityReported, events.CapacitySubject(name), events.ClusterCapacity{Cluster: name, KubernetesVersion: "v1.31.0", Nodes: 1, ReadyNodes: 1,
			Allocatable: list("8"), Allocated: list("2"), ObservedAt: recordedAt})
		r.add(events.TypeClusterHealthChanged, events.HealthSubject(name), events.ClusterHealth{Cluster: name, Ready: true, State: events.ClusterStateReady, Reason: "ClusterReady", Since: recordedAt,
			Conditions: []events.ClusterCondition{{Type: policy.ClusterConditionReady, Status: "True", Reason: "ClusterReady", Message: "ok", LastTransitionTime: recordedAt}}})
	}
	policyKey := events.ObjectKey{Group: "policy.karmada.io", Kind: "PropagationPolicy", Namespace: "default", Name: "my-app-policy"}
	r.add(events.TypeObjectAccepted, events.ObjectSubject(policyKey), events.ObjectRecord{Key: policyKey, APIVersion: "policy.karmada.io/v1alpha1", Generation: 1, Role: events.RolePolicy, UpdatedAt: recordedAt})
	bind(r, myApp, seedPP, 6)
	place(r, myApp, seedPP, 6, "Divided/Weighted", []events.TargetCluster{{Name: "cluster1", Replicas: 3}, {Name: "cluster2", Replicas: 2}, {Name: "cluster3", Replicas: 1}}, nil)
	for _, c := range []events.TargetCluster{{Name: "cluster1", Replicas: 3}, {Name: "cluster2", Replicas: 2}, {Name: "cluster3", Replicas: 1}} {
		work(r, myApp, c.Name, events.WorkRunning, c.Replicas)
	}
}

const deployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"%s","namespace":"default"},"spec":{"replicas":%d,"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}}}`

func bind(r *recorder, key events.ObjectKey, ref *events.PolicyRef, replicas int32) {
	tpl := fmt.Sprintf(deployment, key.Name, replicas)
	r.add(events.TypeBindingChanged, events.BindingSubject(key), events.Binding{Key: key, APIVersion: "apps/v1", Generation: 1, Revision: 1, Policy: ref, Replicas: replicas,
		Template: []byte(tpl), AcceptedAt: recordedAt, CreatedAt: recordedAt})
}

func place(r *recorder, key events.ObjectKey, ref *events.PolicyRef, replicas int32, strategy string, cs []events.TargetCluster, evictions []events.Eviction) {
	tpl := fmt.Sprintf(deployment, key.Name, replicas)
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	r.add(events.TypePlacementDecided, events.PlacementSubject(key), events.PlacementDecision{Key: key, Generation: 1, BindingRevision: 1, Scheduled: true, Clusters: cs,
		Strategy: strategy, Feasible: names, Division: "divided by weight", DecidedAt: r.at, Evictions: evictions,
		Binding: &events.Binding{Key: key, Policy: ref, Replicas: replicas, Template: []byte(tpl)}})
}

func work(r *recorder, key events.ObjectKey, cluster, phase string, replicas int32) {
	r.add(events.TypeWorkStatusChanged, events.WorkSubject(cluster, key), events.WorkStatus{Key: key, Cluster: cluster, Generation: 1, BindingRevision: 1, Phase: phase,
		Replicas: replicas, ReadyReplicas: replicas, Health: events.WorkHealthy, CreatedAt: recordedAt, UpdatedAt: r.at})
}

// webPlaced records web placed 2/2/2.
func webPlaced(r *recorder) {
	policyKey := events.ObjectKey{Group: "policy.karmada.io", Kind: "PropagationPolicy", Namespace: "default", Name: "web-policy"}
	r.add(events.TypeObjectAccepted, events.ObjectSubject(policyKey), events.ObjectRecord{Key: policyKey, APIVersion: "policy.karmada.io/v1alpha1", Generation: 1, Role: events.RolePolicy, UpdatedAt: recordedAt})
	bind(r, web, webPP, 6)
	place(r, web, webPP, 6, "Divided/Aggregated", []events.TargetCluster{{Name: "cluster1", Replicas: 2}, {Name: "cluster2", Replicas: 2}, {Name: "cluster3", Replicas: 2}}, nil)
	for _, c := range []string{"cluster1", "cluster2", "cluster3"} {
		work(r, web, c, events.WorkRunning, 2)
	}
}

// cluster1Lost records cluster1 unreachable and web moved to 3/3.
func cluster1Lost(r *recorder) {
	r.add(events.TypeClusterHealthChanged, events.HealthSubject("cluster1"), events.ClusterHealth{Cluster: "cluster1", State: events.ClusterStateUnreachable, Reason: "ClusterUnreachable",
		Message: "dial tcp: connection refused", Since: r.at, Taints: []corev1.Taint{{Key: policy.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule}}})
	eviction := events.Eviction{Cluster: "cluster1", Reason: events.EvictApplicationFailure, Message: "cluster1 has been Unreachable for 10s", PurgeMode: events.PurgeGracefully, Replicas: 2, EvictedAt: r.at}
	to := []events.TargetCluster{{Name: "cluster2", Replicas: 3}, {Name: "cluster3", Replicas: 3}}
	r.add(events.TypeFailoverEvicted, events.FailoverSubject(web), events.FailoverRecord{Key: web, Eviction: eviction,
		From: []events.TargetCluster{{Name: "cluster1", Replicas: 2}, {Name: "cluster2", Replicas: 2}, {Name: "cluster3", Replicas: 2}}, To: to, At: r.at})
	place(r, web, webPP, 6, "Divided/Aggregated", to, []events.Eviction{eviction})
	work(r, web, "cluster2", events.WorkRunning, 3)
	work(r, web, "cluster3", events.WorkRunning, 3)
}

// failedOver records seed 000, web placed 2/2/2, and cluster1 lost with web
// moved to 3/3.
func failedOver(t *testing.T) *recorder {
	r := newRecorder(t)
	seed000(r)
	webPlaced(r)
	cluster1Lost(r)
	return r
}
