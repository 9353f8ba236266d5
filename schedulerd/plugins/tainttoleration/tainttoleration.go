// Package tainttoleration filters clusters whose NoSchedule/NoExecute taints
// the placement does not tolerate (reference §3.2).
package tainttoleration

import (
	"sync"

	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
)

// Name is the plugin name.
const Name = "TaintToleration"

// TaintToleration fails a cluster with a NoSchedule or NoExecute taint that
// no placement.clusterTolerations entry tolerates. PreferNoSchedule is
// ignored, and a cluster already in the binding's result always passes:
// evicting running work is the failover controller's job, not the filter's.
type TaintToleration struct{}

// New returns the plugin.
func New() TaintToleration { return TaintToleration{} }

// Name implements framework.Plugin.
func (TaintToleration) Name() string { return Name }

// Prepare implements framework.PreparePlugin: it gives the request a cache
// of failure statuses, so that the many clusters carrying the same taint
// (health taints such as not-ready) share one status instead of building
// the reason string each.
func (TaintToleration) Prepare(req *framework.Request) *framework.Status {
	req.SetState(Name, new(statusCache))
	return nil
}

// statusCache holds one Unfit status per distinct untolerated taint of a
// request. Filter may run concurrently, hence the lock; it is only taken
// on the failure path.
type statusCache struct {
	mu      sync.Mutex
	entries []cached
}

type cached struct {
	key, value string
	effect     corev1.TaintEffect
	st         *framework.Status
}

func (sc *statusCache) unfit(t *corev1.Taint) *framework.Status {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for i := range sc.entries {
		e := &sc.entries[i]
		if e.key == t.Key && e.value == t.Value && e.effect == t.Effect {
			return e.st
		}
	}
	st := framework.Unfit(reason(t))
	sc.entries = append(sc.entries, cached{t.Key, t.Value, t.Effect, st})
	return st
}

// FilterAll implements framework.BatchFilterPlugin. Consecutive clusters
// with the same untolerated taint (health taints, mostly) share the
// status without looking it up again.
func (TaintToleration) FilterAll(req *framework.Request, clusters []*framework.ClusterInfo, statuses []*framework.Status) {
	cache, _ := req.State(Name).(*statusCache)
	var last *corev1.Taint
	var lastSt *framework.Status
	for i, c := range clusters {
		if len(c.Spec.Taints) == 0 {
			continue
		}
		t := untolerated(req, c)
		if t == nil {
			continue
		}
		if last == nil || t.Key != last.Key || t.Value != last.Value || t.Effect != last.Effect {
			last, lastSt = t, unfitFor(cache, t)
		}
		statuses[i] = lastSt
	}
}

// Filter implements framework.FilterPlugin.
func (TaintToleration) Filter(req *framework.Request, c *framework.ClusterInfo) *framework.Status {
	if len(c.Spec.Taints) == 0 {
		return nil
	}
	if t := untolerated(req, c); t != nil {
		cache, _ := req.State(Name).(*statusCache)
		return unfitFor(cache, t)
	}
	return nil
}

// untolerated returns the cluster's first NoSchedule or NoExecute taint
// the placement does not tolerate, or nil; nil too when the cluster is in
// the binding's current result.
func untolerated(req *framework.Request, c *framework.ClusterInfo) *corev1.Taint {
	if req.InPrevious(c.Name) {
		return nil
	}
	tols := req.Placement.ClusterTolerations
	for i := range c.Spec.Taints {
		t := &c.Spec.Taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !Tolerated(tols, t) {
			return t
		}
	}
	return nil
}

// unfitFor is the status for an untolerated taint, from the request's
// cache when Prepare made one.
func unfitFor(cache *statusCache, t *corev1.Taint) *framework.Status {
	if cache != nil {
		return cache.unfit(t)
	}
	return framework.Unfit(reason(t))
}

// Tolerated reports whether any toleration tolerates the taint, by the
// Kubernetes rules: a set effect must equal the taint's (empty matches all
// effects); a set key must equal the taint's (empty matches any key);
// Exists ignores the value, Equal or empty requires equal values; Lt/Gt
// (rejected by Karmada's validation) never match.
func Tolerated(tols []corev1.Toleration, t *corev1.Taint) bool {
	for i := range tols {
		tol := &tols[i]
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		if tol.Key != "" && tol.Key != t.Key {
			continue
		}
		switch tol.Operator {
		case corev1.TolerationOpExists:
			return true
		case "", corev1.TolerationOpEqual:
			if tol.Value == t.Value {
				return true
			}
		}
	}
	return false
}

// reason is Karmada's wording, "cluster(s) had untolerated taint {key=value:Effect}"
// ({key:Effect} without a value).
func reason(t *corev1.Taint) string {
	kv := t.Key
	if t.Value != "" {
		kv += "=" + t.Value
	}
	return "cluster(s) had untolerated taint {" + kv + ":" + string(t.Effect) + "}"
}
