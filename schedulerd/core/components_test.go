package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// The rules of reference features §3.2 (multi-component scheduling), one
// case each.

// room gives a cluster free pods and cpu (in cores).
func room(pods, cpu int64) clusterOpt {
	return func(c *framework.ClusterInfo) {
		c.Allocatable = corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI),
			corev1.ResourceCPU: *resource.NewQuantity(cpu, resource.DecimalSI)}
	}
}

func rayLike(pl policy.Placement, comps ...policy.Component) events.Binding {
	return events.Binding{Key: events.ObjectKey{Group: "ray.io", Kind: "RayCluster", Namespace: "default", Name: "rc"},
		APIVersion: "ray.io/v1", UID: "u", Components: comps, Spec: &policy.PropagationSpec{Placement: pl}}
}

func comp(name string, replicas int32, cpu string) policy.Component {
	c := policy.Component{Name: name, Replicas: replicas}
	if cpu != "" {
		c.ReplicaRequirements = &policy.ComponentRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	return c
}

var (
	divided   = &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: policy.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policy.DivisionPreferenceAggregated}
	oneByOne  = []policy.SpreadConstraint{{SpreadByField: "cluster", MinGroups: 1, MaxGroups: 1}}
	headWork  = []policy.Component{comp("head", 1, "1"), comp("worker", 4, "2")} // a set: 5 pods, 9 cpu
	wholeHead = []policy.ComponentReplicas{{Name: "head", Replicas: 1}, {Name: "worker", Replicas: 4}}
)

func TestMultiComponentRules(t *testing.T) {
	tests := []struct {
		name     string
		b        events.Binding
		clusters []framework.ClusterInfo
		previous []events.TargetCluster
		fresh    bool
		want     []events.TargetCluster
		wantErr  string
	}{
		{
			name:     "§3.2.1/§3.2.4: applicable: one cluster, replicas 0, the full set of components",
			b:        rayLike(policy.Placement{ReplicaScheduling: divided, SpreadConstraints: oneByOne}, headWork...),
			clusters: []framework.ClusterInfo{cluster("m1", room(100, 10)), cluster("m2", room(100, 100))},
			want:     []events.TargetCluster{{Name: "m2", Components: wholeHead}},
		},
		{
			name:     "§3.2.2: capacity counts whole sets: 9 free cpu hold one set of 9, never a division",
			b:        rayLike(policy.Placement{ReplicaScheduling: divided, SpreadConstraints: oneByOne}, headWork...),
			clusters: []framework.ClusterInfo{cluster("m1", room(100, 9)), cluster("m2", room(4, 100))},
			want:     []events.TargetCluster{{Name: "m1", Components: wholeHead}},
		},
		{
			name:     "§3.2.3: no cluster holds one set: no enough resource when selecting 1 clusters",
			b:        rayLike(policy.Placement{ReplicaScheduling: divided, SpreadConstraints: oneByOne}, headWork...),
			clusters: []framework.ClusterInfo{cluster("m1", room(100, 8)), cluster("m2", room(4, 100)), cluster("m3")},
			wantErr:  "no enough resource when selecting 1 clusters",
		},
		{
			name:     "§3.2.2: a set without pods needs only free pods",
			b:        rayLike(policy.Placement{ReplicaScheduling: divided, SpreadConstraints: oneByOne}, comp("a", 0, ""), comp("b", 0, "")),
			clusters: []framework.ClusterInfo{cluster("m1"), cluster("m2", room(1, 0))},
			want:     []events.TargetCluster{{Name: "m2", Components: []policy.ComponentReplicas{{Name: "a"}, {Name: "b"}}}},
		},
		{
			name:     "§3.2.3: under Duplicated capacity is ignored",
			b:        rayLike(policy.Placement{SpreadConstraints: oneByOne}, headWork...),
			clusters: []framework.ClusterInfo{cluster("m1", room(1, 1))},
			want:     []events.TargetCluster{{Name: "m1", Components: wholeHead}},
		},
		{
			name:     "§3.2.4: one component goes whole without a components copy",
			b:        rayLike(policy.Placement{ReplicaScheduling: divided, SpreadConstraints: oneByOne}, comp("only", 3, "1")),
			clusters: []framework.ClusterInfo{cluster("m1", room(100, 100))},
			want:     []events.TargetCluster{{Name: "m1"}},
		},
		{
			name:     "§3.2.5: without the 1/1 cluster constraint the whole workload is copied to every selected cluster",
			b:        rayLike(policy.Placement{ReplicaScheduling: divided}, headWork...),
			clusters: []framework.ClusterInfo{cluster("m1"), cluster("m2")},
			want:     []events.TargetCluster{{Name: "m1"}, {Name: "m2"}},
		},
		{
			name: "§3.2.1: maxGroups 2 is not applicable: copied to both selected clusters",
			b: rayLike(policy.Placement{ReplicaScheduling: divided, SpreadConstraints: []policy.SpreadConstraint{{SpreadByField: "cluster", MinGroups: 1, MaxGroups: 2}}},
				headWork...),
			clusters: []framework.ClusterInfo{cluster("m1"), cluster("m2"), cluster("m3")},
			want:     []events.TargetCluster{{Name: "m1"}, {Name: "m2"}},
		},
		{
			name:     "§3.2.6: a Divided workload stays where it is when its components change, even without room for the new set",
			b:        rayLike(policy.Placement{ReplicaScheduling: divided, SpreadConstraints: oneByOne}, headWork...),
			clusters: []framework.ClusterInfo{cluster("m1", room(100, 8)), cluster("m2", room(100, 100))},
			previous: []events.TargetCluster{{Name: "m1", Components: []policy.ComponentReplicas{{Name: "head", Replicas: 1}, {Name: "worker", Replicas: 2}}}},
			want:     []events.TargetCluster{{Name: "m1", Components: wholeHead}},
		},
		{
			name:     "§3.2.6: an explicit reschedule places it afresh: its cluster no longer holds a set",
			b:        rayLike(policy.Placement{ReplicaScheduling: divided, SpreadConstraints: oneByOne}, headWork...),
			clusters: []framework.ClusterInfo{cluster("m1", room(100, 8)), cluster("m2", room(100, 100))},
			previous: []events.TargetCluster{{Name: "m1"}},
			fresh:    true,
			want:     []events.TargetCluster{{Name: "m2", Components: wholeHead}},
		},
	}
	s := newDefault()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Schedule(Input{Binding: tt.b, Clusters: tt.clusters, Previous: tt.previous, Fresh: tt.fresh})
			if tt.wantErr != "" {
				if r.Scheduled || r.Error != tt.wantErr {
					t.Fatalf("scheduled=%v error=%q, want %q", r.Scheduled, r.Error, tt.wantErr)
				}
				return
			}
			if !r.Scheduled {
				t.Fatalf("not scheduled: %s", r.Error)
			}
			if diff := cmp.Diff(tt.want, r.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetsOf(t *testing.T) {
	e := newSetEstimator(headWork)
	tests := []struct {
		name string
		c    framework.ClusterInfo
		want int64
	}{
		{"no resource summary: 0", cluster("m"), 0},
		{"pods bound the sets: 12 pods hold 2 sets of 5", cluster("m", room(12, 100)), 2},
		{"cpu bounds the sets: 27 cpu hold 3 sets of 9", cluster("m", room(100, 27)), 3},
		{"a requested resource not reported: 0", cluster("m", free(100)), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := e.setsOf(&tt.c); got != tt.want {
				t.Errorf("sets = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSetsOfHostileComponentsNeitherPanicsNorFits: components whose
// demand overflows int64 (2^62 memory units × 4) or cancels out (a
// negative count, which policyd refuses but a bus event may carry) were a
// division by zero in setsOf: schedulerd panicked on the binding and on
// every cluster change after it.
func TestSetsOfHostileComponentsNeitherPanicsNorFits(t *testing.T) {
	huge := policy.Component{Name: "w", Replicas: 4, ReplicaRequirements: &policy.ComponentRequirements{
		ResourceRequest: corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(1<<62, resource.BinarySI)}}}
	roomy := cluster("m", func(c *framework.ClusterInfo) {
		c.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("100"), corev1.ResourceCPU: resource.MustParse("100"),
			corev1.ResourceMemory: resource.MustParse("1Ti")}
	})
	for _, c := range []struct {
		what  string
		comps []policy.Component
		want  int64
	}{
		{"a demand beyond int64 fits nowhere", []policy.Component{huge}, 0},
		{"a negative count does not cancel another's demand", []policy.Component{comp("head", 1, "2"), comp("work", -2, "1")}, 50},
	} {
		t.Run(c.what, func(t *testing.T) {
			e := newSetEstimator(c.comps)
			if got := e.setsOf(&roomy); got != c.want {
				t.Errorf("sets = %d, want %d", got, c.want)
			}
		})
	}
}
