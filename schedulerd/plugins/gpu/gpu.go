// Package gpu scores clusters by their free GPUs (seed 004).
package gpu

import (
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
)

// Name is the plugin name.
const Name = "GPU"

// Resource is the GPU resource the plugin counts.
const Resource corev1.ResourceName = "nvidia.com/gpu"

// MaxScore is the score of the cluster with the most free GPUs.
const MaxScore = 100

// GPU prefers clusters with more free GPUs (allocatable − allocated −
// allocating of nvidia.com/gpu), for workloads whose replicas request
// GPUs; for others it does nothing. Scores are normalised across the
// feasible clusters: free × 100 / the largest free count, so the roomiest
// cluster gets 100 and one without free GPUs (or without figures) 0.
// Whether a replica fits at all is the capacity estimate's business: GPU
// requests already bound a cluster's free replicas there.
type GPU struct{}

// New returns the plugin.
func New() GPU { return GPU{} }

// Name implements framework.Plugin.
func (GPU) Name() string { return Name }

// Prepare implements framework.PreparePlugin: a replica without a GPU
// request skips the plugin.
func (GPU) Prepare(req *framework.Request) *framework.Status {
	if q, ok := req.Binding.ReplicaRequirements[Resource]; !ok || q.Sign() <= 0 {
		return framework.Skipped()
	}
	return nil
}

// Score implements framework.ScorePlugin: the raw score is the number of
// free GPUs.
func (GPU) Score(_ *framework.Request, c *framework.ClusterInfo) (int64, *framework.Status) {
	free, ok := c.Free(Resource)
	if !ok || free < 0 {
		return 0, nil
	}
	return free, nil
}

// NormalizeScore implements framework.NormalizeScorePlugin.
func (GPU) NormalizeScore(_ *framework.Request, _ []*framework.ClusterInfo, scores []int64) *framework.Status {
	var most int64
	for _, s := range scores {
		most = max(most, s)
	}
	for i, s := range scores {
		if most > 0 {
			scores[i] = s * MaxScore / most
		} else {
			scores[i] = 0
		}
	}
	return nil
}
