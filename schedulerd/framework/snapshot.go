package framework

import (
	"slices"
	"strings"
	"sync"
	"unsafe"

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

	*family

	memoMu sync.RWMutex   // guards memo
	memo   map[string]any // Memo's
}

// family is what snapshots with the same clusters in the same order, with
// the same labels, spec and prices, share whatever their capacity figures
// (WithAllocating): answers that do not depend on capacity.
type family struct {
	mu sync.RWMutex
	// matches caches, per distinct affinity (Affinity.appendKey), which
	// clusters it matches: see Bind.
	matches map[string][]bool

	// memo: FamilyMemo's answers.
	memo map[any]any

	// DiagnosisMap's memory, by hash of the set of clusters and reasons.
	diagnoses kept[diagnosisTemplate]
	// templateEntries counts the entries of the diagnoses kept.
	templateEntries int
}

// kept is what a family keeps of recurring DiagnosisMap
// calls, by hash: the templates, and the hashes seen once.
type kept[T any] struct {
	byHash map[uint64]*T
	seen   map[uint64]bool
}

// keep, called with f.mu held, keeps build() under h and returns it when
// free (no other template has h), h was seen before and the bounds allow
// n more entries; otherwise it notes h as seen and returns nil.
func keep[T any](f *family, k *kept[T], h uint64, free bool, n int, build func() *T) *T {
	if free && k.seen[h] && len(k.byHash) < maxTemplates && f.templateEntries+n <= maxTemplateEntries {
		f.templateEntries += n
		t := build()
		if k.byHash == nil {
			k.byHash = make(map[uint64]*T)
		}
		k.byHash[h] = t
		return t
	}
	if k.seen == nil {
		k.seen = make(map[uint64]bool)
	}
	if len(k.seen) < maxSeenSets {
		k.seen[h] = true
	}
	return nil
}

type derived struct {
	fam   *family
	index int // in the clusters of every snapshot of fam
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
	s := &Snapshot{clusters: slices.Clone(clusters), family: &family{}}
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
		d.fam, d.index = s.family, i
		d.facts = policy.FactsOf(c.Name, c.Labels, c.Spec)
		start := len(frees)
		frees = d.deriveFree(c, frees)
		d.free = frees[start:len(frees):len(frees)]
		d.prices, d.priced = pricesOf(c)
		s.priced = s.priced || d.priced
		c.derived = d
	}
	return s
}

// WithAllocating returns a snapshot of the same clusters whose Allocating
// figures are replaced by allocating[name] for the clusters named there:
// what schedulerd needs after each placement reserves capacity. Only those
// clusters' free resources are derived again, and the new snapshot shares
// with s the answers that do not depend on capacity (Bind's matches,
// DiagnosisMap's maps), so a capacity-driven decision after
// every placement no longer re-derives every cluster. Memo is not shared
// (a plugin may memoise what depends on capacity). s is unchanged.
func (s *Snapshot) WithAllocating(allocating map[string]corev1.ResourceList) *Snapshot {
	n := &Snapshot{clusters: slices.Clone(s.clusters), priced: s.priced, family: s.family}
	ds := make([]derived, len(n.clusters))
	n.view = make([]*ClusterInfo, len(n.clusters))
	for i := range n.clusters {
		c := &n.clusters[i]
		n.view[i] = c
		d := &ds[i]
		*d = *s.clusters[i].derived
		if a, ok := allocating[c.Name]; ok {
			c.Allocating = a
			c.derived = nil // Free computes from the figures
			d.free = d.deriveFree(c, nil)
		}
		c.derived = d
	}
	return n
}

// deriveFree sets d.common to c's free pods, cpu and memory and appends
// c's other free resources to frees, which it returns. c.derived must be
// nil: Free then computes from c's figures.
func (d *derived) deriveFree(c *ClusterInfo, frees []resourceFree) []resourceFree {
	d.common = [3]commonFree{}
	for name := range c.Allocatable {
		f, _ := c.Free(name)
		if i := commonIndex(name); i >= 0 {
			d.common[i] = commonFree{f, true}
			continue
		}
		frees = append(frees, resourceFree{name: name, free: f})
	}
	return frees
}

// Clusters returns the clusters sorted by name. The slice is the
// snapshot's own: read it, do not modify it.
func (s *Snapshot) Clusters() []ClusterInfo {
	if s == nil {
		return nil
	}
	return s.clusters
}

// IsView reports whether clusters is this snapshot's View (the very
// slice), so that a value per cluster index (Memo) applies to it.
func (s *Snapshot) IsView(clusters []*ClusterInfo) bool {
	return s != nil && len(clusters) == len(s.view) && len(clusters) > 0 && &clusters[0] == &s.view[0]
}

// maxMemo bounds Memo's entries; beyond it values are computed each time.
const maxMemo = 256

// Memo returns what compute returns for key, computed once per snapshot:
// a plugin keeps there what it derives from the clusters for a kind of
// request (its answer per cluster index, say), under a key that starts
// with its name and holds everything the value depends on. compute must
// depend on the snapshot and the key only; the value is shared and
// read-only.
func (s *Snapshot) Memo(key string, compute func() any) any {
	s.memoMu.RLock()
	v, ok := s.memo[key]
	s.memoMu.RUnlock()
	if ok {
		return v
	}
	v = compute()
	s.memoMu.Lock()
	if prev, ok := s.memo[key]; ok {
		v = prev
	} else if len(s.memo) < maxMemo {
		if s.memo == nil {
			s.memo = make(map[string]any)
		}
		s.memo[key] = v
	}
	s.memoMu.Unlock()
	return v
}

// FamilyMemo is Memo for answers that do not depend on capacity, kept
// once for every snapshot of the same clusters with the same labels, spec
// and prices (a new capacity report makes a new snapshot, not a new
// family). key must be comparable and hold everything the value depends
// on besides those clusters; a pointer key is fine for a value read-only
// while the family lives (the pointer keeps it from being reused).
func (s *Snapshot) FamilyMemo(key any, compute func() any) any {
	s.mu.RLock()
	v, ok := s.family.memo[key]
	s.mu.RUnlock()
	if ok {
		return v
	}
	v = compute()
	s.mu.Lock()
	if prev, ok := s.family.memo[key]; ok {
		v = prev
	} else if len(s.family.memo) < maxMemo {
		if s.family.memo == nil {
			s.family.memo = make(map[any]any)
		}
		s.family.memo[key] = v
	}
	s.mu.Unlock()
	return v
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
// costs a byte per cluster); beyond it Bind leaves affinities unbound.
const maxBound = 1024

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
	hits, ok := s.matches[string(key)]
	s.mu.RUnlock()
	if !ok {
		hits = make([]bool, len(s.clusters))
		for i := range s.clusters {
			hits[i] = a.match(&s.clusters[i])
		}
		s.mu.Lock()
		if prev, ok := s.matches[string(key)]; ok {
			hits = prev
		} else if len(s.matches) < maxBound {
			if s.matches == nil {
				s.matches = make(map[string][]bool)
			}
			s.matches[string(key)] = hits
		}
		s.mu.Unlock()
	}
	a.fam, a.hits = s.family, hits
}

// DiagnosisMap returns a map from the name of each of clusters to the
// reasons at the same index. It returns a map kept for a
// recurring diagnosis (the same clusters of this snapshot with the very
// same reason slices: the scheduler shares them between decisions), once
// seen twice; that map is shared and must not be modified.
func (s *Snapshot) DiagnosisMap(clusters []*ClusterInfo, reasons [][]string) map[string][]string {
	var stack [16]uint64
	set, h, ok := s.setOf(clusters, stack[:0])
	if !ok {
		return insertDiagnosis(clusters, reasons)
	}
	for _, r := range reasons[:len(clusters)] {
		h ^= uint64(uintptr(unsafe.Pointer(unsafe.SliceData(r)))) + uint64(len(r))
		h *= 1099511628211
	}
	same := func(t *diagnosisTemplate) bool {
		if t == nil || !slices.Equal(t.set, set) || len(t.reasons) != len(clusters) {
			return false
		}
		for i, r := range reasons[:len(clusters)] {
			if tr := t.reasons[i]; len(tr) != len(r) || unsafe.SliceData(tr) != unsafe.SliceData(r) {
				return false
			}
		}
		return true
	}
	s.mu.RLock()
	t := s.diagnoses.byHash[h]
	s.mu.RUnlock()
	if !same(t) {
		s.mu.Lock()
		if t = s.diagnoses.byHash[h]; !same(t) {
			t = keep(s.family, &s.diagnoses, h, t == nil, len(clusters), func() *diagnosisTemplate {
				return &diagnosisTemplate{set: slices.Clone(set), reasons: slices.Clone(reasons[:len(clusters)]), m: insertDiagnosis(clusters, reasons)}
			})
		}
		s.mu.Unlock()
		if t == nil {
			return insertDiagnosis(clusters, reasons)
		}
	}
	return t.m // shared: read only
}

type diagnosisTemplate struct {
	set     []uint64
	reasons [][]string
	m       map[string][]string
}

func insertDiagnosis(clusters []*ClusterInfo, reasons [][]string) map[string][]string {
	m := make(map[string][]string, len(clusters))
	for i, c := range clusters {
		m[c.Name] = reasons[i]
	}
	return m
}

// Bounds of what DiagnosisMap remembers per snapshot family.
const (
	maxTemplates = 256
	maxSeenSets  = 4096
	// maxTemplateEntries bounds the entries of all the maps kept: a few
	// MB for 5,000 clusters.
	maxTemplateEntries = 1 << 17
)

// setOf returns the clusters as a bit set of their indexes in s and its
// hash; ok is false when one of them is not a cluster of s or comes
// twice.
func (s *Snapshot) setOf(clusters []*ClusterInfo, buf []uint64) (set []uint64, h uint64, ok bool) {
	words := (len(s.clusters) + 63) / 64
	set = slices.Grow(buf[:0], words)[:words]
	for _, c := range clusters {
		d := c.derived
		if d == nil || d.fam != s.family {
			return nil, 0, false
		}
		i := uint32(d.index)
		if set[i/64]&(1<<(i%64)) != 0 {
			return nil, 0, false
		}
		set[i/64] |= 1 << (i % 64)
	}
	h = 14695981039346656037 // FNV-1a over the words
	for _, w := range set {
		h ^= w
		h *= 1099511628211
	}
	return set, h, true
}

// Len is the number of clusters.
func (s *Snapshot) Len() int {
	if s == nil {
		return 0
	}
	return len(s.clusters)
}
