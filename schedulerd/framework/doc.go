// Package framework is the scheduler's plugin API: the cluster snapshot
// entry (ClusterInfo), the per-call input (Request), a plugin's answer
// (Status), one small interface per extension point (FilterPlugin,
// ScorePlugin, and the optional PreparePlugin) and the ordered plugin list
// (Profile). The in-tree plugins live one per package under
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
// GPUs. That is a Score plugin, one file in its own package:
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
//	const gpu corev1.ResourceName = "nvidia.com/gpu"
//
//	// GPU scores a cluster with its free GPUs (allocatable - allocated -
//	// allocating), capped at 100 so it weighs like the other scores.
//	type GPU struct{}
//
//	func (GPU) Name() string { return Name }
//
//	func (GPU) Score(_ *framework.Request, c *framework.ClusterInfo) (int64, *framework.Status) {
//		if c.Allocatable == nil {
//			return 0, nil // no figures reported: no preference
//		}
//		total, used, pending := c.Allocatable[gpu], c.Allocated[gpu], c.Allocating[gpu]
//		free := total.Value() - used.Value() - pending.Value()
//		return min(max(free, 0), 100), nil
//	}
//
// To run it, add it to a profile, e.g. in the daemon's wiring:
//
//	p := plugins.DefaultProfile()
//	p.Scores = append(p.Scores, gpu.GPU{})
//	s := core.New(p)
//
// A filter plugin is the same shape with Filter instead of Score, returning
// framework.Unfit("cluster(s) have no free GPU") to rule a cluster out. A
// plugin that would redo work per cluster (parsing selectors, building
// indexes) implements PreparePlugin and caches the result in the request
// with req.SetState(Name, v).
package framework
