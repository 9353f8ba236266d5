package core

import (
	"os"
	"strconv"
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestZZInstr(t *testing.T) {
	st := os.Getenv("ZZ_STRATEGY")
	if st == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("ZZ_CLUSTERS"))
	iters, _ := strconv.Atoi(os.Getenv("ZZ_ITERS"))
	var rs *policy.ReplicaSchedulingStrategy
	switch st {
	case "Duplicated":
		rs = duplicated()
	case "StaticWeight":
		rs = &policy.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policy.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policy.DivisionPreferenceWeighted,
			WeightPreference: &policy.ClusterPreferences{StaticWeightList: []policy.StaticClusterWeight{
				{TargetCluster: policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "r1"}}}, Weight: 3},
				{TargetCluster: policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, Weight: 1},
			}},
		}
	case "DynamicWeight":
		rs = dynamicWeighted()
	case "Aggregated":
		rs = aggregated()
	}
	s := newDefault()
	cs := benchClusters(n)
	pl := policy.Placement{
		ClusterAffinity:   &policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
		ReplicaScheduling: rs,
	}
	in := Input{Binding: deployment("bench", 50, pl), Clusters: cs}
	in.Binding.UID = "d43fdeeb-d750-4e2b-bee3-64eb94534f4c"
	in.Binding.ReplicaRequirements = corev1.ResourceList{corev1.ResourceCPU: resourceMust("250m"), corev1.ResourceMemory: resourceMust("256Mi")}
	if os.Getenv("ZZ_SNAPSHOT") != "" {
		in.Clusters, in.Snapshot = nil, framework.NewSnapshot(cs)
	}
	for range iters {
		if r := s.Schedule(in); !r.Scheduled {
			t.Fatal(r.Error)
		}
	}
}
