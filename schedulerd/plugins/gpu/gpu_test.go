package gpu

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// gpus is a cluster with alloc GPUs of which used are allocated; alloc ""
// reports no GPU figures.
func gpus(name, alloc, used string) *framework.ClusterInfo {
	c := &framework.ClusterInfo{Name: name, Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("100")}}
	if alloc != "" {
		c.Allocatable[Resource] = resource.MustParse(alloc)
		c.Allocated = corev1.ResourceList{Resource: resource.MustParse(used)}
	}
	return c
}

func TestScore(t *testing.T) {
	tests := []struct {
		name     string
		clusters []*framework.ClusterInfo
		want     map[string]int64
	}{
		{name: "the cluster with the most free GPUs scores 100, the others in proportion",
			clusters: []*framework.ClusterInfo{gpus("a", "8", "6"), gpus("b", "8", "0"), gpus("c", "", "")},
			want:     map[string]int64{"a": 25, "b": 100, "c": 0}},
		{name: "the cluster with more free GPUs wins whatever its size",
			clusters: []*framework.ClusterInfo{gpus("a-small", "8", "6"), gpus("b-big", "8", "1")},
			want:     map[string]int64{"a-small": 28, "b-big": 100}},
		{name: "no free GPUs anywhere scores 0 everywhere",
			clusters: []*framework.ClusterInfo{gpus("a", "4", "4"), gpus("b", "", "")},
			want:     map[string]int64{"a": 0, "b": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &framework.Request{Binding: &events.Binding{ReplicaRequirements: corev1.ResourceList{Resource: resource.MustParse("1")}}, Placement: &policy.Placement{}}
			p := New()
			if st := p.Prepare(req); st != nil {
				t.Fatalf("Prepare: %v", st)
			}
			raw := make([]int64, len(tt.clusters))
			for i, c := range tt.clusters {
				raw[i], _ = p.Score(req, c)
			}
			p.NormalizeScore(req, tt.clusters, raw)
			got := map[string]int64{}
			for i, c := range tt.clusters {
				got[c.Name] = raw[i]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareSkipsAReplicaWithoutGPUs(t *testing.T) {
	tests := []struct {
		name string
		reqs corev1.ResourceList
	}{
		{"no requests at all", nil},
		{"cpu only", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		{"zero GPUs", corev1.ResourceList{Resource: resource.MustParse("0")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &framework.Request{Binding: &events.Binding{ReplicaRequirements: tt.reqs}, Placement: &policy.Placement{}}
			if st := New().Prepare(req); !st.IsSkip() {
				t.Errorf("want the plugin skipped, got %v", st)
			}
		})
	}
}
