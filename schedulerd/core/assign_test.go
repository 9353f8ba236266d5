package core

import (
	"fmt"
	"math"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hugeClusters is n ready clusters named member-0000..., labelled
// weight=1..3 in turn, each with room for perCluster pods.
func hugeClusters(n int, perCluster int64) []framework.ClusterInfo {
	cs := make([]framework.ClusterInfo, n)
	for i := range cs {
		cs[i] = cluster(fmt.Sprintf("member-%04d", i), labels("weight", fmt.Sprint(1+i%3)), free(perCluster))
	}
	return cs
}

// byLabel is a static weight list giving clusters labelled weight=k the
// weight k, for k = 1..3 (the Divided 3:2:1).
func byLabel() *policy.ReplicaSchedulingStrategy {
	var rules []policy.StaticClusterWeight
	for k := int64(1); k <= 3; k++ {
		rules = append(rules, policy.StaticClusterWeight{
			TargetCluster: policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"weight": fmt.Sprint(k)}}},
			Weight:        k,
		})
	}
	return staticWeighted(rules...)
}

// Every strategy places about 2·10^9 replicas (and the int32 maximum) over
// 1,000 clusters: the int32 replica counts of the placement are all
// positive and sum to the replicas, with no overflow on the way.
func TestDivisionOfTwoBillionReplicasOverAThousandClustersAddsUp(t *testing.T) {
	const perCluster = 3_000_000 // 3·10^9 of room in all
	previous := []events.TargetCluster{{Name: "member-0001", Replicas: math.MaxInt32 / 4}, {Name: "member-0500", Replicas: 7}}
	tests := []struct {
		name     string
		rs       *policy.ReplicaSchedulingStrategy
		replicas int32
		previous []events.TargetCluster
		fresh    bool
	}{
		{"static weights 3:2:1 by label selector", byLabel(), 2_000_000_000, nil, false},
		{"static weights 3:2:1 by label selector, the int32 maximum", byLabel(), math.MaxInt32, nil, false},
		{"equal static weights", staticWeighted(), math.MaxInt32, nil, false},
		{"dynamicWeight AvailableReplicas", dynamicWeighted(), 2_000_000_000, nil, false},
		{"dynamicWeight AvailableReplicas scaling up", dynamicWeighted(), 2_000_000_000, previous, false},
		{"dynamicWeight AvailableReplicas scaling down", dynamicWeighted(), 1_000_000_000, previous, false},
		{"dynamicWeight AvailableReplicas, fresh", dynamicWeighted(), math.MaxInt32, previous, true},
		{"Aggregated", aggregated(), 2_000_000_000, nil, false},
		{"Aggregated scaling up", aggregated(), math.MaxInt32, previous, false},
	}
	s := newDefault()
	cs := hugeClusters(1000, perCluster)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Binding: deployment("big", tt.replicas, policy.Placement{ReplicaScheduling: tt.rs}), Clusters: cs, Previous: tt.previous, Fresh: tt.fresh}
			in.Binding.UID = oddUID
			got := s.Schedule(in)
			if !got.Scheduled {
				t.Fatalf("not scheduled: %s", got.Error)
			}
			var sum int64
			for _, tc := range got.Clusters {
				if tc.Replicas <= 0 {
					t.Errorf("%s got %d replicas", tc.Name, tc.Replicas)
				}
				sum += int64(tc.Replicas)
			}
			if diff := cmp.Diff(int64(tt.replicas), sum); diff != "" {
				t.Errorf("replicas placed (-want +got):\n%s\n%s", diff, got.Division)
			}
		})
	}
}

// The template, 2^31-1 replicas Divided 3:2:1, is placed exactly as
// Webster one seat at a time places it (checked once with
// websterOneSeatAtATime, which takes minutes for this).
func TestDivisionOfTheInt32MaximumByThreeTwoOne(t *testing.T) {
	cs := []framework.ClusterInfo{
		cluster("member1", labels("weight", "3")),
		cluster("member2", labels("weight", "2")),
		cluster("member3", labels("weight", "1")),
	}
	in := Input{Binding: deployment("big", math.MaxInt32, policy.Placement{ReplicaScheduling: byLabel()}), Clusters: cs}
	got := newDefault().Schedule(in)
	want := "member1:1073741824 member2:715827882 member3:357913941"
	if diff := cmp.Diff(want, placed(got.Clusters)); diff != "" {
		t.Errorf("placement (-want +got):\n%s\n%s", diff, got.Division)
	}
}

// BenchmarkDivideHugeReplicas schedules 1,000 and 2^31-1 replicas over 10,
// 100 and 1,000 clusters: the CPU per decision does not depend on the
// replicas. Run with -cpu 1 and read cpu-ns/op.
func BenchmarkDivideHugeReplicas(b *testing.B) {
	strategies := []struct {
		name string
		rs   *policy.ReplicaSchedulingStrategy
	}{
		{"StaticWeight", byLabel()},
		{"DynamicWeight", dynamicWeighted()},
		{"Aggregated", aggregated()},
	}
	s := newDefault()
	for _, n := range []int{10, 100, 1000} {
		snap := framework.NewSnapshot(hugeClusters(n, math.MaxInt32))
		for _, st := range strategies {
			for _, replicas := range []int32{1000, math.MaxInt32} {
				in := Input{Binding: deployment("big", replicas, policy.Placement{ReplicaScheduling: st.rs}), Snapshot: snap}
				in.Binding.UID = oddUID
				b.Run(fmt.Sprintf("clusters=%d/strategy=%s/replicas=%d", n, st.name, replicas), func(b *testing.B) { benchDecisions(b, s, in) })
			}
		}
	}
}
