// Package framework is the scheduler's plugin API: the cluster snapshot
// (ClusterInfo, and Snapshot for clusters prepared once for many
// decisions), the per-call input (Request), a plugin's answer (Status), one
// small interface per extension point (FilterPlugin, ScorePlugin, and the
// optional PreparePlugin and NormalizeScorePlugin) and the ordered plugin
// list (Profile). The in-tree plugins live one per package under
// schedulerd/plugins; plugins.DefaultProfile lists them in order.
//
// Plugins are pure: no I/O, no clock, no logging, no metrics (they import
// neither zap nor prometheus nor nats). Every "no" is a Status with a reason
// a user can act on; the core prefixes it with the plugin name
// ("TaintToleration: cluster(s) had untolerated taint {...}") and reports it
// per cluster in the placement decision.
//
// # Writing a plugin
//
// Seed 004 asks for GPU-aware placement: prefer clusters with more free
// GPUs. That is a Score plugin, one file in its own package; the real one
// is schedulerd/plugins/gpu (in plugins.DefaultProfile), and reads like
// this, less its comments:
//
//	// Package gpu scores clusters by their free GPUs.
//	package gpu
//
//	import (
//		"github.com/flotilla-io/flotilla/schedulerd/framework"
//		corev1 "k8s.io/api/core/v1"
//	)
//
//	const Name = "GPU"
//
//	const Resource corev1.ResourceName = "nvidia.com/gpu"
//
//	type GPU struct{}
//
//	func (GPU) Name() string { return Name }
//
//	// Prepare: replicas without a GPU request skip the plugin.
//	func (GPU) Prepare(req *framework.Request) *framework.Status {
//		if q, ok := req.Binding.ReplicaRequirements[Resource]; !ok || q.Sign() <= 0 {
//			return framework.Skipped()
//		}
//		return nil
//	}
//
//	// Score: the free GPUs (allocatable - allocated - allocating).
//	func (GPU) Score(_ *framework.Request, c *framework.ClusterInfo) (int64, *framework.Status) {
//		free, ok := c.Free(Resource)
//		if !ok || free < 0 {
//			return 0, nil
//		}
//		return free, nil
//	}
//
//	// NormalizeScore: 0..100 relative to the roomiest feasible cluster.
//	func (GPU) NormalizeScore(_ *framework.Request, _ []*framework.ClusterInfo, scores []int64) *framework.Status {
//		var most int64
//		for _, s := range scores {
//			most = max(most, s)
//		}
//		for i, s := range scores {
//			if most > 0 {
//				scores[i] = s * 100 / most
//			} else {
//				scores[i] = 0
//			}
//		}
//		return nil
//	}
//
// To run a plugin, list it in plugins.DefaultProfile (the one place that
// names the in-tree plugins, with why they come in that order), or add it
// to a profile in the daemon's wiring:
//
//	p := plugins.DefaultProfile()
//	p.Scores = append(p.Scores, myplugin.New())
//	s := core.New(p)
//
// A filter plugin is the same shape with Filter instead of Score, returning
// framework.Unfit("cluster(s) have no free GPU") to rule a cluster out. A
// plugin that would redo work per cluster (parsing selectors, building
// indexes) implements PreparePlugin and caches the result in the request
// with req.SetState(Name, v); one with nothing to do for a request returns
// framework.Skipped() from Prepare and is not called per cluster. Per-
// cluster figures (free resources, prices) come from ClusterInfo's
// accessors, which a Snapshot computes once for many decisions.
package framework
