package events

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events/policy"
)

func TestAnAssignmentCarriesOnlyWhatItsClusterMustApply(t *testing.T) {
	image := func(registry string) policy.Overriders {
		return policy.Overriders{ImageOverrider: []policy.ImageOverrider{{Component: "Registry", Operator: "replace", Value: registry}}}
	}
	east := &policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "east"}}}
	override := policy.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "default"}, Spec: policy.OverrideSpec{OverrideRules: []policy.RuleWithCluster{
		{TargetCluster: &policy.ClusterAffinity{ClusterNames: []string{"cluster1"}}, Overriders: image("beijing")},
		{TargetCluster: &policy.ClusterAffinity{ClusterNames: []string{"cluster2"}}, Overriders: image("shanghai")},
		{TargetCluster: east, Overriders: image("east")},
	}}}
	onlyCluster2 := policy.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "secret", Namespace: "default"},
		Spec: policy.OverrideSpec{TargetCluster: &policy.ClusterAffinity{ClusterNames: []string{"cluster2"}}, Overriders: image("hidden")}}
	spec := &policy.PropagationSpec{Placement: policy.Placement{ClusterAffinity: &policy.ClusterAffinity{ClusterNames: []string{"cluster1", "cluster2"}}}}
	p := PlacementDecision{Key: ObjectKey{Kind: "Deployment", Group: "apps", Namespace: "default", Name: "web"}, Generation: 2, BindingRevision: 3, Scheduled: true,
		Clusters: []TargetCluster{{Name: "cluster1", Replicas: 3}, {Name: "cluster2", Replicas: 2}}, Feasible: []string{"cluster1", "cluster2"},
		Diagnosis: map[string][]string{"cluster3": {"ClusterAffinity: not selected"}}, Scores: ScoresOf(map[string]int64{"cluster2": 5}), Division: "6 = 3 + 2 + 1",
		Binding: &Binding{Key: ObjectKey{Kind: "Deployment", Group: "apps", Namespace: "default", Name: "web"}, Revision: 3, Spec: spec,
			Overrides: []policy.OverridePolicy{override, onlyCluster2}}}
	mine := &policy.ClusterAffinity{ClusterNames: []string{"cluster1"}}
	notMine := &policy.ClusterAffinity{ExcludeClusters: []string{"cluster1"}}
	narrowed := override
	narrowed.Spec = policy.OverrideSpec{OverrideRules: []policy.RuleWithCluster{
		{TargetCluster: mine, Overriders: image("beijing")}, {TargetCluster: notMine}, {TargetCluster: mine, Overriders: image("east")}}}
	want := PlacementDecision{Key: p.Key, Generation: 2, BindingRevision: 3, Scheduled: true, Clusters: []TargetCluster{{Name: "cluster1", Replicas: 3}},
		Binding: &Binding{Key: p.Key, Revision: 3, Spec: &policy.PropagationSpec{}, Overrides: []policy.OverridePolicy{narrowed}}}
	got := AssignmentOf(p, policy.ClusterFacts{Name: "cluster1", Labels: map[string]string{"region": "east"}})
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Binding{})); diff != "" {
		t.Errorf("cluster1's assignment (-want +got):\n%s", diff)
	}
	if len(p.Binding.Overrides) != 2 || p.Binding.Spec.Placement.ClusterAffinity == nil {
		t.Error("AssignmentOf changed the placement it narrowed")
	}
}

func TestAnAssignmentGoesToEveryClusterThePlacementOrTheOneItReplacesNames(t *testing.T) {
	last := PlacementDecision{Clusters: []TargetCluster{{Name: "a"}, {Name: "b"}}}
	p := PlacementDecision{Clusters: []TargetCluster{{Name: "c"}, {Name: "a"}}, Evictions: []Eviction{{Cluster: "d"}}}
	for _, c := range []struct {
		name string
		last *PlacementDecision
		want []string
	}{
		{"a first placement goes to its targets and evicted clusters", nil, []string{"a", "c", "d"}},
		{"a later one also to the clusters it no longer names", &last, []string{"a", "b", "c", "d"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, AssignedClusters(p, c.last)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLeftClustersAreTheAssignedOnesAPlacementKeepsNoCopyIn(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p := PlacementDecision{Clusters: []TargetCluster{{Name: "c", Replicas: 1}, {Name: "a", Replicas: 2}},
		Evictions: []Eviction{{Cluster: "e", EvictedAt: at}}}
	last := &PlacementDecision{Clusters: []TargetCluster{{Name: "b", Replicas: 3}, {Name: "a", Replicas: 1}}}
	for _, tc := range []struct {
		name string
		p    PlacementDecision
		last *PlacementDecision
		want []string
	}{
		{"a first placement without evictions leaves none", PlacementDecision{Clusters: p.Clusters}, nil, nil},
		{"its evictions", PlacementDecision{Clusters: p.Clusters, Evictions: p.Evictions}, nil, []string{"e"}},
		{"what the placement it replaces held, and its evictions, sorted", p, last, []string{"b", "e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, LeftClusters(tc.p, tc.last)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
