package core

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// decided is the part of a decision the Decide tests compare.
type decided struct {
	Scheduled bool
	Clusters  string   // "a:1 b:2"
	Error     bool     // an error is given
	Diagnosed []string // clusters with a diagnosis, sorted
	Evictions []string // "<cluster> kept" or "<cluster> purged"
	Affinity  string
}

func summary(p events.PlacementDecision) decided {
	d := decided{Scheduled: p.Scheduled, Clusters: placed(p.Clusters), Error: p.Error != "", Affinity: p.AffinityName}
	for c := range p.Diagnosis {
		d.Diagnosed = append(d.Diagnosed, c)
	}
	slices.Sort(d.Diagnosed)
	for _, e := range p.Evictions {
		state := " purged"
		if e.Kept() {
			state = " kept"
		}
		d.Evictions = append(d.Evictions, e.Cluster+state)
	}
	return d
}

func TestDecide(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	noSchedule := func(key string) clusterOpt { return taint(key, "", corev1.TaintEffectNoSchedule) }
	three := func(opts map[string][]clusterOpt) *framework.Snapshot {
		var cs []framework.ClusterInfo
		for _, n := range []string{"a", "b", "c"} {
			cs = append(cs, cluster(n, append([]clusterOpt{free(100)}, opts[n]...)...))
		}
		return framework.NewSnapshot(cs)
	}
	dynamic := deployment("web", 6, policy.Placement{ReplicaScheduling: dynamicWeighted()})
	onlyAC := deployment("web", 6, policy.Placement{ClusterAffinity: names("a", "c"), ReplicaScheduling: dynamicWeighted()})
	nowhere := deployment("web", 6, policy.Placement{ClusterAffinity: names("x"), ReplicaScheduling: dynamicWeighted()})
	// Divided without a division preference: the filters pass, the
	// division fails (a failure other than "no cluster fits").
	broken := deployment("web", 6, policy.Placement{ReplicaScheduling: &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: policy.ReplicaSchedulingTypeDivided}})
	previous := func(targets string, evs ...events.Eviction) *events.PlacementDecision {
		return &events.PlacementDecision{Scheduled: true, Clusters: targetsOf(targets), AffinityName: "before", Evictions: evs}
	}
	kept := func(c string) events.Eviction {
		return events.Eviction{Cluster: c, PurgeMode: events.PurgeGracefully, EvictedAt: at}
	}
	purged := func(c string) events.Eviction {
		e := kept(c)
		e.PurgedAt = &at
		return e
	}
	never := func(c string) events.Eviction {
		e := kept(c)
		e.PurgeMode = events.PurgeNever
		return e
	}
	tests := []struct {
		name string
		in   DecideInput
		want decided
	}{
		{
			name: "a first decision divides the replicas by free capacity",
			in:   DecideInput{Binding: dynamic, Snapshot: three(nil)},
			want: decided{Scheduled: true, Clusters: "a:2 b:2 c:2"},
		},
		{
			name: "the previous placement is kept while it still fits",
			in:   DecideInput{Binding: dynamic, Snapshot: three(nil), Previous: previous("a:4 b:2")},
			want: decided{Scheduled: true, Clusters: "a:4 b:2"},
		},
		{
			name: "a previous cluster keeps its replicas despite a new NoSchedule taint",
			in:   DecideInput{Binding: dynamic, Snapshot: three(map[string][]clusterOpt{"b": {noSchedule("dedicated")}}), Previous: previous("a:4 b:2")},
			want: decided{Scheduled: true, Clusters: "a:4 b:2"},
		},
		{
			name: "a previous cluster that no longer fits loses its replicas to the others",
			in:   DecideInput{Binding: onlyAC, Snapshot: three(nil), Previous: previous("a:4 b:2")},
			want: decided{Scheduled: true, Clusters: "a:5 c:1", Diagnosed: []string{"b"}},
		},
		{
			name: "a not-ready cluster is no candidate",
			in:   DecideInput{Binding: dynamic, Snapshot: three(map[string][]clusterOpt{"c": {noSchedule(policy.TaintClusterNotReady)}})},
			want: decided{Scheduled: true, Clusters: "a:3 b:3", Diagnosed: []string{"c"}},
		},
		{
			name: "no cluster fits: the previous placement is cleared and the diagnosis given",
			in:   DecideInput{Binding: nowhere, Snapshot: three(nil), Previous: previous("a:4 b:2")},
			want: decided{Error: true, Diagnosed: []string{"a", "b", "c"}, Affinity: "before"},
		},
		{
			name: "another failure keeps the previous placement and its affinity term",
			in:   DecideInput{Binding: broken, Snapshot: three(nil), Previous: previous("a:4 b:2")},
			want: decided{Clusters: "a:4 b:2", Error: true, Affinity: "before"},
		},
		{
			name: "another failure keeps the previous placement without a cluster that is no member any more",
			in:   DecideInput{Binding: broken, Snapshot: three(nil), Previous: previous("a:4 gone:2")},
			want: decided{Clusters: "a:4", Error: true, Affinity: "before"},
		},
		{
			name: "another failure without a previous placement places nothing",
			in:   DecideInput{Binding: broken, Snapshot: three(nil)},
			want: decided{Error: true},
		},
		{
			name: "a fresh reschedule divides afresh instead of keeping the previous division",
			in:   DecideInput{Binding: dynamic, Snapshot: three(nil), Previous: previous("a:4 b:2"), Fresh: true},
			want: decided{Scheduled: true, Clusters: "a:2 b:2 c:2"},
		},
		{
			name: "an evicted cluster is no candidate and its replicas are placed again",
			in:   DecideInput{Binding: dynamic, Snapshot: three(nil), Previous: previous("a:4 b:2"), Evictions: []events.Eviction{kept("b")}},
			want: decided{Scheduled: true, Clusters: "a:5 c:1", Diagnosed: []string{"b"}, Evictions: []string{"b kept"}},
		},
		{
			name: "without evictions given the previous placement's are carried",
			in:   DecideInput{Binding: dynamic, Snapshot: three(nil), Previous: previous("a:4 c:2", purged("b"))},
			want: decided{Scheduled: true, Clusters: "a:4 c:2", Diagnosed: []string{"b"}, Evictions: []string{"b purged"}},
		},
		{
			name: "another failure keeps the previous placement without the evicted cluster",
			in:   DecideInput{Binding: broken, Snapshot: three(nil), Previous: previous("a:4 b:2"), Evictions: []events.Eviction{kept("b")}},
			want: decided{Clusters: "a:4", Error: true, Diagnosed: []string{"b"}, Evictions: []string{"b kept"}, Affinity: "before"},
		},
		{
			name: "a fresh reschedule forgets a purged eviction, so the cluster is a candidate again",
			in:   DecideInput{Binding: dynamic, Snapshot: three(nil), Previous: previous("a:4 c:2", purged("b")), Fresh: true},
			want: decided{Scheduled: true, Clusters: "a:2 b:2 c:2"},
		},
		{
			name: "a fresh reschedule forgets a purgeMode Never eviction",
			in:   DecideInput{Binding: dynamic, Snapshot: three(nil), Previous: previous("a:4 c:2", never("b")), Fresh: true},
			want: decided{Scheduled: true, Clusters: "a:2 b:2 c:2"},
		},
		{
			name: "a fresh reschedule keeps an eviction whose copy is still kept",
			in:   DecideInput{Binding: dynamic, Snapshot: three(nil), Previous: previous("a:4 c:2", kept("b")), Fresh: true},
			want: decided{Scheduled: true, Clusters: "a:3 c:3", Diagnosed: []string{"b"}, Evictions: []string{"b kept"}},
		},
	}
	s := newDefault()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(s.Decide(tt.in))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// The decision names the binding revision it decides and is stamped with
// the given time in UTC.
func TestDecideStampsTheDecision(t *testing.T) {
	b := deployment("web", 2, policy.Placement{})
	b.Generation, b.Revision = 3, 7
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	p := newDefault().Decide(DecideInput{Binding: b, Snapshot: framework.NewSnapshot(clusters("a")), Now: now})
	type stamp struct {
		Key                  events.ObjectKey
		Generation, Revision int64
		DecidedAt            time.Time
		Location             string
	}
	want := stamp{Key: b.Key, Generation: 3, Revision: 7, DecidedAt: now, Location: "UTC"}
	got := stamp{Key: p.Key, Generation: p.Generation, Revision: p.BindingRevision, DecidedAt: p.DecidedAt, Location: p.DecidedAt.Location().String()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stamp (-want +got):\n%s", diff)
	}
}

func TestFollowsClusterChanges(t *testing.T) {
	dynamic := deployment("web", 6, policy.Placement{ReplicaScheduling: dynamicWeighted()})
	dup := deployment("web", 6, policy.Placement{ReplicaScheduling: duplicated()})
	service := deployment("web", 0, policy.Placement{ReplicaScheduling: dynamicWeighted()})
	noSpec := deployment("web", 6, policy.Placement{})
	noSpec.Spec = nil
	placedOn := func(scheduled bool, targets string) *events.PlacementDecision {
		return &events.PlacementDecision{Scheduled: scheduled, Clusters: targetsOf(targets)}
	}
	tests := []struct {
		name string
		b    events.Binding
		last *events.PlacementDecision
		want bool
	}{
		{"a binding never placed follows", dynamic, nil, true},
		{"a binding that could not be placed follows", dynamic, placedOn(false, ""), true},
		{"a divided workload placed on clusters still there stays", dynamic, placedOn(true, "a:4 b:2"), false},
		{"a divided workload placed on a cluster that left follows", dynamic, placedOn(true, "a:4 gone:2"), true},
		{"a Duplicated workload follows", dup, placedOn(true, "a:6 b:6"), true},
		{"a template without replicas follows", service, placedOn(true, "a:0 b:0"), true},
		{"a binding without a policy spec follows", noSpec, placedOn(true, "a:6"), true},
	}
	gone := func(c string) bool { return c == "gone" }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FollowsClusterChanges(&tt.b, tt.last, gone); got != tt.want {
				t.Errorf("FollowsClusterChanges = %v, want %v", got, tt.want)
			}
		})
	}
}

// panicking is a filter with a defect: it panics.
type panicking struct{}

func (panicking) Name() string { return "Panicking" }
func (panicking) Filter(*framework.Request, *framework.ClusterInfo) *framework.Status {
	panic("index out of range [3] with length 3")
}

// TestADefectMetByOneBindingKeepsItsPlacementAndSaysSo: a panic while
// scheduling one binding is its failed decision, which keeps the
// previous placement and names the defect, instead of a panic that
// stops schedulerd where it decides outside a consumer.
func TestADefectMetByOneBindingKeepsItsPlacementAndSaysSo(t *testing.T) {
	s := New(framework.Profile{Filters: []framework.FilterPlugin{panicking{}}})
	b := deployment("web", 6, policy.Placement{ReplicaScheduling: dynamicWeighted()})
	snap := framework.NewSnapshot([]framework.ClusterInfo{cluster("a", free(100)), cluster("b", free(100))})
	prev := &events.PlacementDecision{Scheduled: true, Clusters: targetsOf("a:4 b:2")}
	p := s.Decide(DecideInput{Binding: b, Snapshot: snap, Previous: prev})
	if p.Scheduled || placed(p.Clusters) != "a:4 b:2" || !strings.Contains(p.Error, "a defect in Flotilla") || !strings.Contains(p.Error, "index out of range") {
		t.Errorf("decision: scheduled %t, clusters %q, error %q; want the previous placement kept and the defect named", p.Scheduled, placed(p.Clusters), p.Error)
	}
}
