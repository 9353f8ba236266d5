package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/internal/cputime"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func benchClusters(n int) []framework.ClusterInfo {
	cs := make([]framework.ClusterInfo, n)
	for i := range cs {
		cs[i] = framework.ClusterInfo{
			Name:   fmt.Sprintf("member-%05d", i),
			Labels: map[string]string{"env": "prod", "region": fmt.Sprintf("r%d", i%10)},
			Spec:   policy.ClusterSpec{Provider: "aws", Region: fmt.Sprintf("r%d", i%10)},
			Ready:  true,
			Allocatable: corev1.ResourceList{
				corev1.ResourcePods:   resourceMust("110"),
				corev1.ResourceCPU:    resourceMust(fmt.Sprintf("%d", 16+i%48)),
				corev1.ResourceMemory: resourceMust("128Gi"),
			},
			Allocated: corev1.ResourceList{corev1.ResourcePods: resourceMust("30"), corev1.ResourceCPU: resourceMust("4")},
		}
		if i%7 == 0 {
			cs[i].Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}
		}
	}
	return cs
}

func BenchmarkSchedule(b *testing.B) {
	strategies := []struct {
		name string
		rs   *policy.ReplicaSchedulingStrategy
	}{
		{"Duplicated", duplicated()},
		{"StaticWeight", &policy.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policy.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policy.DivisionPreferenceWeighted,
			WeightPreference: &policy.ClusterPreferences{StaticWeightList: []policy.StaticClusterWeight{
				{TargetCluster: policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "r1"}}}, Weight: 3},
				{TargetCluster: policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, Weight: 1},
			}},
		}},
		{"DynamicWeight", dynamicWeighted()},
		{"Aggregated", aggregated()},
	}
	s := newDefault()
	for _, n := range []int{10, 100, 1000, 5000} {
		cs := benchClusters(n)
		for _, st := range strategies {
			pl := policy.Placement{
				ClusterAffinity:   &policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}},
				ReplicaScheduling: st.rs,
			}
			in := Input{Binding: deployment("bench", 50, pl), Clusters: cs}
			in.Binding.UID = "d43fdeeb-d750-4e2b-bee3-64eb94534f4c"
			in.Binding.ReplicaRequirements = corev1.ResourceList{corev1.ResourceCPU: resourceMust("250m"), corev1.ResourceMemory: resourceMust("256Mi")}
			b.Run(fmt.Sprintf("clusters=%d/strategy=%s", n, st.name), func(b *testing.B) { benchDecisions(b, s, in) })
			// The daemon's faster path: the clusters prepared once
			// (framework.NewSnapshot) and shared between decisions.
			snap := in
			snap.Clusters, snap.Snapshot = nil, framework.NewSnapshot(cs)
			b.Run(fmt.Sprintf("clusters=%d/strategy=%s/input=snapshot", n, st.name), func(b *testing.B) { benchDecisions(b, s, snap) })
		}
	}
}

// benchDecisions schedules in over and over, reporting allocations and
// cpu-ns/op.
func benchDecisions(b *testing.B, s *Scheduler, in Input) {
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		if r := s.Schedule(in); !r.Scheduled {
			b.Fatal(r.Error)
		}
	}
	reportCPU(b, cpu0)
}

// reportCPU reports the process CPU time (user + system, garbage
// collection included) per operation since cpu0, as cpu-ns/op: on a
// shared machine it varies much less than ns/op, which counts the time
// the benchmark waited for a core too. Run with -cpu 1 so that the
// process does nothing else.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	if cpu := cputime.Process() - cpu0; cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
