package cost

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// priced is a cluster with the price annotations, or none when cpu is "".
func priced(name, cpu, memory string) *framework.ClusterInfo {
	c := &framework.ClusterInfo{Name: name}
	if cpu != "" {
		c.Annotations = map[string]string{framework.AnnotationCPUPrice: cpu, framework.AnnotationMemoryPrice: memory}
	}
	return c
}

// scores runs the plugin over clusters for a replica of 1 core and 4 GiB
// under weights, and returns the normalised scores by cluster.
func scores(t *testing.T, weights *policy.CostWeights, clusters ...*framework.ClusterInfo) map[string]int64 {
	t.Helper()
	b := &events.Binding{ReplicaRequirements: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("4Gi")}}
	pl := &policy.Placement{ReplicaScheduling: &policy.ReplicaSchedulingStrategy{CostWeights: weights}}
	req := &framework.Request{Binding: b, Placement: pl}
	p := New()
	if st := p.Prepare(req); st != nil {
		t.Fatalf("Prepare: %v", st)
	}
	raw := make([]int64, len(clusters))
	for i, c := range clusters {
		s, st := p.Score(req, c)
		if st != nil {
			t.Fatalf("Score %s: %v", c.Name, st)
		}
		raw[i] = s
	}
	if st := p.NormalizeScore(req, clusters, raw); st != nil {
		t.Fatalf("NormalizeScore: %v", st)
	}
	out := map[string]int64{}
	for i, c := range clusters {
		out[c.Name] = raw[i]
	}
	return out
}

func TestScore(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	cheapCPU := priced("cheap-cpu", "0.02", "0.010") // 1 core + 4 GiB: 0.02 + 0.04 = 0.06
	cheapMem := priced("cheap-mem", "0.05", "0.002") // 0.05 + 0.008 = 0.058
	dear := priced("dear", "0.10", "0.020")          // 0.10 + 0.08 = 0.18
	unpriced := priced("unpriced", "", "")
	tests := []struct {
		name     string
		weights  *policy.CostWeights
		clusters []*framework.ClusterInfo
		want     map[string]int64
	}{
		{name: "the cheapest cluster scores 100, the dearest and unpriced ones 0",
			clusters: []*framework.ClusterInfo{dear, cheapCPU, unpriced},
			want:     map[string]int64{"cheap-cpu": 100, "dear": 0, "unpriced": 0}},
		{name: "with default weights the cluster with cheap memory is cheapest for a memory-heavy replica",
			clusters: []*framework.ClusterInfo{cheapMem, cheapCPU},
			want:     map[string]int64{"cheap-mem": 100, "cheap-cpu": 0}},
		{name: "costWeights change the winner: weighing cpu 10 to 1 makes the cheap-cpu cluster cheapest",
			weights:  &policy.CostWeights{CPU: f(10), Memory: f(1)},
			clusters: []*framework.ClusterInfo{cheapMem, cheapCPU},
			want:     map[string]int64{"cheap-mem": 0, "cheap-cpu": 100}},
		{name: "equal prices all score 100",
			clusters: []*framework.ClusterInfo{priced("a", "1", "1"), priced("b", "1", "1")},
			want:     map[string]int64{"a": 100, "b": 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, scores(t, tt.weights, tt.clusters...)); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareSkipsASnapshotWithoutPrices(t *testing.T) {
	snap := framework.NewSnapshot([]framework.ClusterInfo{{Name: "a"}, {Name: "b"}})
	req := &framework.Request{Binding: &events.Binding{}, Placement: &policy.Placement{}, Snapshot: snap}
	if st := New().Prepare(req); !st.IsSkip() {
		t.Errorf("want the plugin skipped on a snapshot without prices, got %v", st)
	}
}
