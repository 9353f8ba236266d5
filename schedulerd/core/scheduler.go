// Package core is schedulerd's pure scheduling core: given a binding, a
// cluster snapshot and the binding's current result it decides where the
// binding runs and with how many replicas, following Karmada's semantics
// (the "reference §n" in this package's comments; DESIGN.md says what that
// reference is).
//
// The core does no I/O, reads no clock, does not log and never depends on
// map iteration order: the same Input always gives the same Result, whatever
// the order of Input.Clusters.
package core

import (
	"cmp"
	"slices"
	"sync"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// Input is everything one scheduling decision depends on.
type Input struct {
	// Binding supplies Key, UID (the Webster tie-break), Replicas,
	// ReplicaRequirements and Spec.Placement (nil Spec: the zero placement,
	// i.e. every cluster, Duplicated).
	Binding events.Binding
	// Clusters is the snapshot; names must be unique. Ignored when Snapshot
	// is set.
	Clusters []framework.ClusterInfo
	// Snapshot, when non-nil, is used instead of Clusters: the same
	// clusters prepared once by framework.NewSnapshot, so that a decision
	// does not re-derive facts, free resources and prices per cluster. The
	// shell can keep one between cluster changes and share it between
	// concurrent decisions. Both ways give the same Result.
	Snapshot *framework.Snapshot
	// Previous is the binding's current result (empty on first schedule).
	Previous []events.TargetCluster
	// Evicted names the clusters with graceful eviction tasks for this binding.
	Evicted []string
	// Fresh: an explicit reschedule is pending (reference §1.1 rule 3 and
	// §2.5): dynamic strategies recompute from scratch and clusterAffinities
	// restart from the first term.
	Fresh bool
	// ObservedAffinity is the clusterAffinities term the binding was last
	// scheduled with ("" = the first term); ignored without clusterAffinities.
	ObservedAffinity string
	// Peers are the placements of the binding's workload affinity peers
	// (Groups.Peers); nil when it has no group.
	Peers *framework.WorkloadPeers
}

// Result is one scheduling decision, with the reasons behind it.
type Result struct {
	Scheduled bool
	// Clusters is the placement, sorted by name; nil when not scheduled.
	Clusters []events.TargetCluster
	// Strategy is the resolved replica strategy (policy.StrategyKind).
	Strategy string
	// Feasible lists the clusters that passed every filter, sorted.
	Feasible []string
	// Diagnosis: every filtered cluster -> its reasons, each
	// "<Plugin>: <reason>". The slices may be shared between clusters
	// and between results, and so may the map between results of
	// decisions on one Snapshot: treat them as read-only.
	Diagnosis map[string][]string
	// Scores: every feasible cluster -> the sum of the score plugins, in
	// Feasible's order (it shares Feasible's names).
	Scores *events.ClusterScores
	// Division explains the replica arithmetic in one line, ending with
	// the cost per hour when replicas landed on priced clusters.
	Division string
	// CostPerHour is what the placement costs per hour at the clusters'
	// prices (framework.AnnotationCPUPrice, AnnotationMemoryPrice): the sum
	// over the placement of replicas × the per-replica price
	// (framework.ReplicaCost). Clusters without prices add nothing; 0 when
	// no replica landed on a priced cluster, and when not scheduled.
	CostPerHour float64
	// Error says why the binding is unschedulable; "" when Scheduled.
	Error string
	// Unfit: the failure is "no cluster fits" (the filters left nothing).
	// Decide then clears the binding's placement; after any other failure
	// it keeps the current one (reference §1.2).
	Unfit bool
	// AffinityName is the clusterAffinities term this result was computed
	// with; the caller records it as the new observed term when Scheduled.
	AffinityName string
	Warnings     []string
}

// Scheduler runs a plugin profile. It holds no per-call state: Schedule is
// safe for concurrent use as long as the profile's plugins are.
type Scheduler struct {
	profile  framework.Profile
	prepares []framework.PreparePlugin
	// filterPrep[i] and scorePrep[i] index prepares for Filters[i] and
	// Scores[i] (-1: the plugin has no Prepare), so a Skip status can skip
	// the plugin.
	filterPrep []int
	scorePrep  []int
	// normalizers[i] is Scores[i] as a NormalizeScorePlugin, or nil.
	normalizers []framework.NormalizeScorePlugin
	// lines remembers the one-line diagnoses ("<Plugin>: <reason>") given
	// so far, so that results share them (and a snapshot can recognise a
	// diagnosis it has built before, Snapshot.DiagnosisMap).
	lines struct {
		sync.RWMutex
		m map[reasonKey][]string
	}
}

// maxLines bounds Scheduler.lines; beyond it lines are made per decision.
const maxLines = 4096

// New returns a scheduler running the given profile.
func New(p framework.Profile) *Scheduler {
	s := &Scheduler{profile: p}
	index := map[string]int{}
	add := func(pl framework.Plugin) int {
		pp, ok := pl.(framework.PreparePlugin)
		if !ok {
			return -1
		}
		i, seen := index[pp.Name()]
		if !seen {
			i = len(s.prepares)
			index[pp.Name()] = i
			s.prepares = append(s.prepares, pp)
		}
		return i
	}
	for _, f := range p.Filters {
		s.filterPrep = append(s.filterPrep, add(f))
	}
	for _, sc := range p.Scores {
		s.scorePrep = append(s.scorePrep, add(sc))
		n, _ := sc.(framework.NormalizeScorePlugin)
		s.normalizers = append(s.normalizers, n)
	}
	return s
}

// scratch is per-call working memory, pooled so that a decision allocates
// little more than its Result. Only lengths are reset between calls: the
// pointers left behind keep a snapshot alive until the pool drops the
// scratch (sync.Pool does at the second garbage collection) or the next
// call overwrites them, which costs less than clearing them every call.
type scratch struct {
	view           []*framework.ClusterInfo // the clusters, sorted by name (read only)
	buf            []*framework.ClusterInfo // view, when not a snapshot's
	feasible       []*framework.ClusterInfo
	feasibleAt     []int32 // the feasible clusters' positions in view
	cands          []candidate
	prepared       []*framework.Status // per prepare plugin
	filterPlugins  []indexedFilter     // filters in force for the request
	reasons        [][]string          // per cluster of view
	statuses       []*framework.Status // per cluster of view
	raw            []int64             // one score plugin's scores
	failed         []diagnosed
	failedClusters []*framework.ClusterInfo
	failedReasons  [][]string
	lastDiag       []lastDiagnosis // per filter plugin
	keys           []orderKey
	packed         []uint64
	tmp            []party
	at             []int32
	sorted         []candidate
	parts          []party
	heap           websterHeap
}

type diagnosed struct {
	c       *framework.ClusterInfo
	reasons []string
}

// lastDiagnosis is the last reason a filter plugin gave and its shared
// one-line diagnosis: plugins return the same reason (often the same
// status) for most of the clusters they reject.
type lastDiagnosis struct {
	reason string
	d      []string
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func (sc *scratch) release() {
	sc.view, sc.buf, sc.feasible, sc.cands, sc.prepared = nil, sc.buf[:0], sc.feasible[:0], sc.cands[:0], sc.prepared[:0]
	scratchPool.Put(sc)
}

// Schedule decides the placement of in.Binding. With clusterAffinities it
// tries the terms in order from the observed one (the first one after an
// explicit reschedule); the first term that schedules wins, and if none
// does the first failure is returned (reference §1.2).
func (s *Scheduler) Schedule(in Input) Result {
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	if in.Snapshot != nil {
		sc.view = in.Snapshot.View() // read only; sc.buf keeps the buffer
	} else {
		sc.buf = viewOf(&in, sc.buf)
		sc.view = sc.buf
	}
	pl := placementOf(&in.Binding)
	terms := pl.ClusterAffinities
	if len(terms) == 0 {
		return s.scheduleTerm(&in, &pl, -1, sc)
	}
	start := 0
	if !in.Fresh {
		start = max(0, slices.IndexFunc(terms, func(t policy.ClusterAffinityTerm) bool {
			return t.AffinityName == in.ObservedAffinity
		}))
	}
	var first Result
	for i := start; i < len(terms); i++ {
		r := s.scheduleTerm(&in, &pl, i, sc)
		if r.Scheduled {
			if i > start {
				r.Warnings = append(r.Warnings, "clusterAffinities term "+quote(terms[start].AffinityName)+" could not be scheduled ("+first.Error+"); used term "+quote(terms[i].AffinityName))
			}
			return r
		}
		if i == start {
			first = r
		}
	}
	return first
}

// viewOf lists the input's clusters in name order: a snapshot is sorted
// already; Clusters are sorted here when they are not (the daemon's are),
// so that everything downstream sees one order whatever the input order.
func viewOf(in *Input, buf []*framework.ClusterInfo) []*framework.ClusterInfo {
	if in.Snapshot != nil {
		return in.Snapshot.View() // read only
	}
	cs := in.Clusters
	buf = slices.Grow(buf[:0], len(cs))
	sorted := true
	for i := range cs {
		if i > 0 && cs[i].Name < cs[i-1].Name {
			sorted = false
		}
		buf = append(buf, &cs[i])
	}
	if !sorted {
		slices.SortFunc(buf, func(a, b *framework.ClusterInfo) int { return cmp.Compare(a.Name, b.Name) })
	}
	return buf
}

// scheduleTerm is one full scheduling pass with the given clusterAffinities
// term in force (-1: placement.clusterAffinity or none).
func (s *Scheduler) scheduleTerm(in *Input, pl *policy.Placement, term int, sc *scratch) Result {
	req := newRequest(in, pl, term)
	strategy := pl.Strategy()
	res := Result{Strategy: string(strategy), AffinityName: req.AffinityName}

	feasible := s.filter(req, sc, &res)
	if len(feasible) == 0 {
		res.Unfit = true
		res.Error = fitError(len(sc.view), res.Diagnosis)
		return res
	}
	cands := s.score(req, feasible, sc, &res)
	multi := multiTemplate(req.Binding, pl)
	if kept := keptWhole(in, req, strategy, cands); kept != nil {
		res.Scheduled = true
		res.Clusters, res.Division = wholeWorkload(req.Binding, multi, kept)
		return res
	}
	if capacityMatters(req, strategy) {
		estimateCapacity(req, multi, cands)
		if orderMatters(req, strategy) {
			cands = orderCandidates(cands, sc)
		}
	}

	selected, err := selectClusters(req, strategy, multi, cands, &res.Warnings)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if len(req.Binding.Components) > 0 && len(selected) > 0 {
		res.Scheduled = true
		res.Clusters, res.Division = wholeWorkload(req.Binding, multi, selected)
		return res
	}
	targets, division, err := assignReplicas(req, strategy, selected, in, &res.Warnings, sc)
	res.Division = division
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Scheduled = true
	res.Clusters = targets
	if req.Workload {
		res.CostPerHour, res.Division = costOf(req, selected, targets, res.Division)
	}
	return res
}

func placementOf(b *events.Binding) policy.Placement {
	if b.Spec == nil {
		return policy.Placement{}
	}
	return b.Spec.Placement
}

// affinityKey names the affinities of one term of one spec (term -1: the
// placement's clusterAffinity) in a snapshot family's memo.
type affinityKey struct {
	spec *policy.PropagationSpec
	term int
}

// boundAffinities compiles the affinity in force (the term's, then its
// overflow affinities) and binds each to the snapshot (nil: unbound). The
// result is read-only: decisions of one family share it.
func boundAffinities(snap *framework.Snapshot, pl *policy.Placement, term int) []framework.Affinity {
	var affs []framework.Affinity
	switch {
	case pl.ClusterAffinity != nil:
		affs = []framework.Affinity{framework.CompileAffinity(pl.ClusterAffinity)}
	case term >= 0:
		t := &pl.ClusterAffinities[term]
		affs = make([]framework.Affinity, 0, 1+len(t.OverflowAffinities))
		affs = append(affs, framework.CompileAffinity(&t.ClusterAffinity))
		for i := range t.OverflowAffinities {
			affs = append(affs, framework.CompileAffinity(&t.OverflowAffinities[i]))
		}
	}
	for i := range affs {
		snap.Bind(&affs[i]) // nil snapshot: nothing to do
	}
	return affs
}

// newRequest builds the per-call plugin input and prepares the affinity in
// force once, so that no selector is parsed per cluster.
func newRequest(in *Input, pl *policy.Placement, term int) *framework.Request {
	b := &in.Binding
	req := &framework.Request{
		Binding:   b,
		Snapshot:  in.Snapshot,
		Placement: pl,
		Workload:  b.Replicas > 0 || len(b.ReplicaRequirements) > 0,
		Peers:     in.Peers,
	}
	if pl.ClusterAffinity == nil && term >= 0 {
		req.AffinityName = pl.ClusterAffinities[term].AffinityName
	}
	if b.Spec != nil && in.Snapshot != nil {
		// pl is a copy of the binding's spec (shared and read-only), so the
		// spec's pointer and the term name what the affinities depend on.
		req.Affinities = in.Snapshot.FamilyMemo(affinityKey{b.Spec, term}, func() any {
			return boundAffinities(in.Snapshot, pl, term)
		}).([]framework.Affinity)
	} else {
		req.Affinities = boundAffinities(in.Snapshot, pl, term)
	}
	if len(in.Previous) > 0 {
		req.Previous = make(map[string]int32, len(in.Previous))
		for _, t := range in.Previous {
			req.Previous[t.Name] += t.Replicas
		}
	}
	if len(in.Evicted) > 0 {
		req.Evicted = make(map[string]struct{}, len(in.Evicted))
		for _, c := range in.Evicted {
			req.Evicted[c] = struct{}{}
		}
	}
	return req
}
