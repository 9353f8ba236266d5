package core

import (
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
)

// GPU requests bound the replicas a cluster can take like any other
// resource (the GPU plugin's own scores are tested in plugins/gpu).
func TestGPUAwarePlacement(t *testing.T) {
	gpus := func(pods, alloc, used string) clusterOpt {
		return func(c *framework.ClusterInfo) {
			c.Allocatable = corev1.ResourceList{corev1.ResourcePods: resourceMust(pods), "nvidia.com/gpu": resourceMust(alloc)}
			c.Allocated = corev1.ResourceList{"nvidia.com/gpu": resourceMust(used)}
		}
	}
	spreadOne := []policy.SpreadConstraint{{SpreadByField: "cluster", MinGroups: 1, MaxGroups: 1}}
	gpuJob := func(replicas int32, pl policy.Placement, cs ...framework.ClusterInfo) Input {
		return withRequests(Input{Binding: deployment("train", replicas, pl), Clusters: cs}, "nvidia.com/gpu", "1")
	}
	runScheduleCases(t, []scheduleCase{
		{name: "the GPU plugin prefers the cluster with more free GPUs",
			in:   gpuJob(1, policy.Placement{SpreadConstraints: spreadOne}, cluster("a-small", gpus("100", "8", "6")), cluster("b-big", gpus("100", "8", "1"))),
			want: "b-big:1"},
		{name: "GPU requests limit capacity: 4 GPU replicas do not fit 3 free GPUs",
			in:      gpuJob(4, policy.Placement{ReplicaScheduling: aggregated()}, cluster("a", gpus("100", "4", "1"))),
			wantErr: "Clusters available replicas 3 are not enough to schedule."},
		{name: "GPU requests limit capacity: dynamic weights divide by free GPUs, not free pods",
			in:   gpuJob(6, policy.Placement{ReplicaScheduling: dynamicWeighted()}, cluster("a", gpus("100", "4", "0")), cluster("b", gpus("100", "8", "0"))),
			want: "a:2 b:4"},
		{name: "a cluster without GPUs cannot take a GPU replica",
			in:   gpuJob(2, policy.Placement{ReplicaScheduling: aggregated()}, cluster("cpu-only", free(100)), cluster("gpu", gpus("100", "2", "0"))),
			want: "gpu:2"},
	})
}
