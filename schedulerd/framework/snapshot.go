package framework

import (
	"maps"
	"slices"
	"strings"
	"sync"

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
	view     []*ClusterInfo // &clusters[i]
	priced   bool           // some cluster has prices

	// matches caches, per distinct affinity (Affinity.appendKey), which
	// clusters it matches: see Bind.
	mu      sync.RWMutex
	matches map[string][]uint64

	zerosOnce sync.Once
	zeros     map[string]int64 // every cluster -> 0, for ScoreMap
}

type derived struct {
	snap  *Snapshot
	index int32 // in snap.clusters
	facts policy.ClusterFacts
	// common holds the free pods, cpu and memory (ok false: not in
	// Allocatable), which every estimate reads; free has the others.
	common [3]commonFree
	free   []resourceFree // one per other resource in Allocatable
	prices Prices
	priced bool
}

type commonFree struct {
	free int64
	ok   bool
}

// commonIndex is the index in derived.common of pods, cpu and memory,
// or -1.
func commonIndex(name corev1.ResourceName) int {
	switch name {
	case corev1.ResourcePods:
		return 0
	case corev1.ResourceCPU:
		return 1
	case corev1.ResourceMemory:
		return 2
	}
	return -1
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
	s.view = make([]*ClusterInfo, len(s.clusters))
	for i := range s.clusters {
		c := &s.clusters[i]
		s.view[i] = c
		c.derived = nil // a clone of a snapshot's cluster: derive afresh
		d := &ds[i]
		d.snap, d.index = s, int32(i)
		d.facts = policy.FactsOf(c.Name, c.Labels, c.Spec)
		start := len(frees)
		for name := range c.Allocatable {
			f, _ := c.Free(name)
			if i := commonIndex(name); i >= 0 {
				d.common[i] = commonFree{f, true}
				continue
			}
			frees = append(frees, resourceFree{name: name, free: f})
		}
		d.free = frees[start:len(frees):len(frees)]
		d.prices, d.priced = pricesOf(c)
		s.priced = s.priced || d.priced
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

// Priced reports whether any cluster has prices (ClusterInfo.Prices).
func (s *Snapshot) Priced() bool { return s != nil && s.priced }

// View returns pointers to the clusters, sorted by name, as a
// decision walks them. The slice is the snapshot's own: read it, do not
// modify it.
func (s *Snapshot) View() []*ClusterInfo {
	if s == nil {
		return nil
	}
	return s.view
}

// maxBound bounds the number of affinities a snapshot remembers (each
// costs a bit per cluster); beyond it Bind leaves affinities unbound.
const maxBound = 4096

// Bind prepares a for matching this snapshot's clusters: which clusters a
// given affinity matches is worked out once per snapshot and shared by
// every decision that binds an equal affinity (in practice, every binding
// of one policy until the clusters change), so that Matches on a cluster
// of the snapshot reads one bit instead of evaluating selectors. Matches
// on any other cluster evaluates as before. An unbound Affinity and a
// bound one give the same answers.
func (s *Snapshot) Bind(a *Affinity) {
	if s == nil || a.never || (a.bare && a.reqs == nil && a.sel == nil) {
		return // nothing to evaluate per cluster
	}
	var buf [128]byte
	key := a.appendKey(buf[:0])
	s.mu.RLock()
	bits, ok := s.matches[string(key)]
	s.mu.RUnlock()
	if !ok {
		bits = make([]uint64, (len(s.clusters)+63)/64)
		for i := range s.clusters {
			if a.match(&s.clusters[i]) {
				bits[i/64] |= 1 << (i % 64)
			}
		}
		s.mu.Lock()
		if prev, ok := s.matches[string(key)]; ok {
			bits = prev
		} else if len(s.matches) < maxBound {
			if s.matches == nil {
				s.matches = make(map[string][]uint64)
			}
			s.matches[string(key)] = bits
		}
		s.mu.Unlock()
	}
	a.snap, a.bits = s, bits
}

// ScoreMap returns a new map from the name of each of clusters to the
// score at the same index. When clusters are most of this snapshot's, in
// its order, the map starts as a copy of one made once with every
// cluster at 0 (copying a map costs far less than inserting every name),
// from which the others are deleted; otherwise the names are inserted.
func (s *Snapshot) ScoreMap(clusters []*ClusterInfo, scores []int64) map[string]int64 {
	n, f := len(s.Clusters()), len(clusters)
	nonZero := 0
	for _, v := range scores[:f] {
		if v != 0 {
			nonZero++
		}
	}
	// Rough costs, in map operations: a copy is worth about a tenth of
	// an insert per cluster, deleting and updating about one.
	if f == 0 || 10*(n-f+nonZero)+n >= 10*f {
		return insertScores(clusters, scores)
	}
	s.zerosOnce.Do(func() {
		s.zeros = make(map[string]int64, n)
		for i := range s.clusters {
			s.zeros[s.clusters[i].Name] = 0
		}
	})
	m := maps.Clone(s.zeros)
	j := 0
	for i := range s.clusters {
		if j < f && clusters[j] == &s.clusters[i] {
			j++
			continue
		}
		delete(m, s.clusters[i].Name)
	}
	if j != f || len(m) != f {
		return insertScores(clusters, scores) // not this snapshot's clusters, in order
	}
	if nonZero > 0 {
		for k, c := range clusters {
			if v := scores[k]; v != 0 {
				m[c.Name] = v
			}
		}
	}
	return m
}

func insertScores(clusters []*ClusterInfo, scores []int64) map[string]int64 {
	m := make(map[string]int64, len(clusters))
	for k, c := range clusters {
		m[c.Name] = scores[k]
	}
	return m
}

// Len is the number of clusters.
func (s *Snapshot) Len() int {
	if s == nil {
		return 0
	}
	return len(s.clusters)
}
