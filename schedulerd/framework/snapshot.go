package framework

import (
	"slices"
	"strings"

	"github.com/flotilla-io/flotilla/events/policy"
	corev1 "k8s.io/api/core/v1"
)

// Snapshot is an immutable set of member clusters, sorted by name, with
// what the scheduler would otherwise derive from every cluster on every
// decision computed once: selector facts, free resources in Units and
// prices. The shell builds one when cluster state changes and passes it to
// every decision until the next change (core.Input.Snapshot). A Snapshot
// is safe for concurrent use; nothing may modify it or its clusters.
type Snapshot struct {
	clusters []ClusterInfo
}

type derived struct {
	facts  policy.ClusterFacts
	free   []resourceFree // one per resource in Allocatable
	prices Prices
	priced bool
}

type resourceFree struct {
	name corev1.ResourceName
	free int64
}

// NewSnapshot copies clusters (names must be unique), sorts the copy by
// name and derives each cluster's data. The ClusterInfo values are copied
// shallowly: their maps and slices are shared and must not change after.
func NewSnapshot(clusters []ClusterInfo) *Snapshot {
	s := &Snapshot{clusters: slices.Clone(clusters)}
	slices.SortFunc(s.clusters, func(a, b ClusterInfo) int { return strings.Compare(a.Name, b.Name) })
	ds := make([]derived, len(s.clusters))
	n := 0
	for i := range s.clusters {
		n += len(s.clusters[i].Allocatable)
	}
	frees := make([]resourceFree, 0, n)
	for i := range s.clusters {
		c := &s.clusters[i]
		c.derived = nil // a clone of a snapshot's cluster: derive afresh
		d := &ds[i]
		d.facts = policy.FactsOf(c.Name, c.Labels, c.Spec)
		start := len(frees)
		for name := range c.Allocatable {
			f, _ := c.Free(name)
			frees = append(frees, resourceFree{name: name, free: f})
		}
		d.free = frees[start:len(frees):len(frees)]
		d.prices, d.priced = pricesOf(c)
		c.derived = d
	}
	return s
}

// Clusters returns the clusters sorted by name. The slice is the
// snapshot's own: read it, do not modify it.
func (s *Snapshot) Clusters() []ClusterInfo {
	if s == nil {
		return nil
	}
	return s.clusters
}

// Len is the number of clusters.
func (s *Snapshot) Len() int {
	if s == nil {
		return 0
	}
	return len(s.clusters)
}
