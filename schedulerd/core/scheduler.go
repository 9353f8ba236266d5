// Package core is schedulerd's pure scheduling core: given a binding, a
// cluster snapshot and the binding's current result it decides where the
// binding runs and with how many replicas, following Karmada's semantics
// (../../../shared/reference/karmada-semantics.md §1-4, the "reference").
//
// The core does no I/O, reads no clock, does not log and never depends on
// map iteration order: the same Input always gives the same Result, whatever
// the order of Input.Clusters.
package core

import (
	"math/bits"
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
	// Scores: every feasible cluster -> the sum of the score plugins.
	// Decisions on one Snapshot may share the map: treat it as read-only.
	Scores map[string]int64
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
	// A caller then clears the binding's placement; after any other failure
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
		slices.SortFunc(buf, func(a, b *framework.ClusterInfo) int { return cmpString(a.Name, b.Name) })
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
	if capacityMatters(req, strategy) {
		estimateCapacity(req, cands)
		if orderMatters(req, strategy) {
			cands = orderCandidates(cands, sc)
		}
	}

	selected, err := selectClusters(req, strategy, cands, &res.Warnings)
	if err != nil {
		res.Error = err.Error()
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

// newRequest builds the per-call plugin input and prepares the affinity in
// force once, so that no selector is parsed per cluster.
func newRequest(in *Input, pl *policy.Placement, term int) *framework.Request {
	b := &in.Binding
	req := &framework.Request{
		Binding:   b,
		Snapshot:  in.Snapshot,
		Placement: pl,
		Workload:  b.Replicas > 0 || len(b.ReplicaRequirements) > 0,
	}
	switch {
	case pl.ClusterAffinity != nil:
		req.Affinities = []framework.Affinity{framework.CompileAffinity(pl.ClusterAffinity)}
	case term >= 0:
		t := &pl.ClusterAffinities[term]
		req.AffinityName = t.AffinityName
		req.Affinities = make([]framework.Affinity, 0, 1+len(t.OverflowAffinities))
		req.Affinities = append(req.Affinities, framework.CompileAffinity(&t.ClusterAffinity))
		for i := range t.OverflowAffinities {
			req.Affinities = append(req.Affinities, framework.CompileAffinity(&t.OverflowAffinities[i]))
		}
	}
	for i := range req.Affinities {
		in.Snapshot.Bind(&req.Affinities[i]) // nil Snapshot: nothing to do
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

// prepare runs every Prepare once for the request and records the answers
// in sc.prepared. It returns the reasons of failed Prepares, which every
// cluster then carries.
func (s *Scheduler) prepare(req *framework.Request, sc *scratch) []string {
	var failed []string
	sc.prepared = sc.prepared[:0]
	for _, p := range s.prepares {
		st := p.Prepare(req)
		sc.prepared = append(sc.prepared, st)
		if st.IsSuccess() || st.IsSkip() {
			continue
		}
		for _, r := range st.Reasons {
			failed = append(failed, p.Name()+": "+r)
		}
	}
	return failed
}

// skipped reports whether the plugin with Prepare index i asked to be
// skipped for this request.
func skipped(sc *scratch, i int) bool {
	return i >= 0 && sc.prepared[i].IsSkip()
}

// filter runs every filter plugin on every cluster and records every
// failure; a cluster is feasible only if all pass (reference §1 step 2).
// The feasible clusters come out in name order.
func (s *Scheduler) filter(req *framework.Request, sc *scratch, res *Result) []*framework.ClusterInfo {
	failedPrepare := s.prepare(req, sc)
	filters := sc.filterPlugins[:0]
	for i, f := range s.profile.Filters {
		if !skipped(sc, s.filterPrep[i]) {
			batch, _ := f.(framework.BatchFilterPlugin)
			filters = append(filters, indexedFilter{f, batch, i})
		}
	}
	sc.filterPlugins = filters
	d := diagnoser{s: s, last: sc.lastDiag[:0]}
	for range s.profile.Filters {
		d.last = append(d.last, lastDiagnosis{})
	}
	// Plugin by plugin, each over every cluster (one call per plugin
	// when it can answer in a batch); each cluster's reasons still come
	// in plugin order.
	view := sc.view
	reasons := slices.Grow(sc.reasons[:0], len(view))[:len(view)]
	clear(reasons)
	statuses := slices.Grow(sc.statuses[:0], len(view))[:len(view)]
	for _, f := range filters {
		clear(statuses)
		if f.batch != nil {
			f.batch.FilterAll(req, view, statuses)
		} else {
			for i, c := range view {
				statuses[i] = f.p.Filter(req, c)
			}
		}
		// Plugins mostly return one shared status for one reason: its
		// diagnosis line is looked up once per run of equal statuses.
		var lastSt *framework.Status
		var lastLine []string
		for i, st := range statuses {
			if st.IsSuccess() {
				continue
			}
			if reasons[i] == nil && len(st.Reasons) == 1 {
				if st != lastSt {
					lastSt, lastLine = st, d.line(f.i, st.Reasons[0])
				}
				reasons[i] = lastLine
				continue
			}
			reasons[i] = d.add(reasons[i], f.i, st)
		}
	}
	sc.reasons, sc.statuses = reasons, statuses
	feasible := sc.feasible[:0]
	at := sc.feasibleAt[:0]
	failed := sc.failed[:0]
	for i, c := range view {
		rs := reasons[i]
		if failedPrepare != nil {
			for _, r := range failedPrepare {
				rs = addReason(rs, []string{r})
			}
		}
		if len(rs) == 0 {
			feasible = append(feasible, c)
			at = append(at, int32(i))
			continue
		}
		failed = append(failed, diagnosed{c, rs})
	}
	sc.feasibleAt = at
	if len(failed) > 0 {
		if snap := req.Snapshot; snap != nil {
			cs, rs := sc.failedClusters[:0], sc.failedReasons[:0]
			for _, f := range failed {
				cs, rs = append(cs, f.c), append(rs, f.reasons)
			}
			res.Diagnosis = snap.DiagnosisMap(cs, rs)
			sc.failedClusters, sc.failedReasons = cs, rs
		} else {
			// Built once at its final size: growing it showed in profiles.
			res.Diagnosis = make(map[string][]string, len(failed))
			for _, f := range failed {
				res.Diagnosis[f.c.Name] = f.reasons
			}
		}
	}
	clear(d.last)
	sc.lastDiag = d.last
	sc.feasible, sc.failed = feasible, failed[:0]
	return feasible
}

// indexedFilter is a filter plugin in force and its index in the profile.
type indexedFilter struct {
	p     framework.FilterPlugin
	batch framework.BatchFilterPlugin // p, when it is one
	i     int
}

// diagnoser turns filter statuses into diagnosis lines. Most filtered
// clusters fail one plugin for one shared reason: they get one shared
// diagnosis slice instead of a string and a slice each.
type diagnoser struct {
	s      *Scheduler
	last   []lastDiagnosis        // per filter plugin
	shared map[reasonKey][]string // lines made for this decision only
}

type reasonKey struct {
	plugin int
	reason string
}

// add appends the diagnosis of plugin pi's failed status to reasons.
func (d *diagnoser) add(reasons []string, pi int, st *framework.Status) []string {
	if len(st.Reasons) == 0 {
		return addReason(reasons, d.line(pi, st.Code.String()))
	}
	for _, r := range st.Reasons {
		reasons = addReason(reasons, d.line(pi, r))
	}
	return reasons
}

// line is the shared one-line diagnosis "<Plugin>: <reason>".
func (d *diagnoser) line(pi int, reason string) []string {
	if l := &d.last[pi]; l.d != nil && l.reason == reason {
		return l.d
	}
	k := reasonKey{pi, reason}
	lines := &d.s.lines
	lines.RLock()
	line, ok := lines.m[k]
	lines.RUnlock()
	if !ok {
		line, ok = d.shared[k]
	}
	if !ok {
		line = []string{d.s.profile.Filters[pi].Name() + ": " + reason}
		lines.Lock()
		if prev, ok := lines.m[k]; ok {
			line = prev
		} else if len(lines.m) < maxLines {
			if lines.m == nil {
				lines.m = make(map[reasonKey][]string)
			}
			lines.m[k] = line
		} else {
			if d.shared == nil {
				d.shared = make(map[reasonKey][]string)
			}
			d.shared[k] = line
		}
		lines.Unlock()
	}
	d.last[pi] = lastDiagnosis{reason, line}
	return line
}

// addReason appends a one-element diagnosis to reasons. The first one is
// kept as is (shared); a second one makes a private copy.
func addReason(reasons, d []string) []string {
	if reasons == nil {
		return d
	}
	out := make([]string, 0, len(reasons)+1)
	return append(append(out, reasons...), d...)
}

// candidate is a feasible cluster with what ordering, selection and
// division need.
type candidate struct {
	c     *framework.ClusterInfo
	score int64
	// rank is 1 + the cluster's position among the feasible clusters,
	// which are in name order: comparing ranks compares names (0: not
	// known, in tests).
	rank  int32
	at    int32 // position in the decision's view (scratch.view)
	tier  int
	prev  int64 // replicas the binding has there now
	free  int64 // AllocatableReplicas: what the estimator says still fits
	avail int64 // AvailableReplicas: free + prev
}

func (c *candidate) name() string { return c.c.Name }

// score sums the score plugins per feasible cluster (reference §1 step 3),
// normalising the scores of plugins that ask for it first. feasible is in
// name order, so Result.Feasible needs no sort.
func (s *Scheduler) score(req *framework.Request, feasible []*framework.ClusterInfo, sc *scratch, res *Result) []candidate {
	n := len(feasible)
	cands := slices.Grow(sc.cands[:0], n)[:n]
	tiers := len(req.Affinities) > 1 // only overflow affinities make tiers other than 0
	for i, c := range feasible {
		cands[i] = candidate{c: c, rank: int32(i + 1), at: sc.feasibleAt[i]}
		if req.Previous != nil {
			cands[i].prev = int64(req.Previous[c.Name])
		}
		if tiers {
			cands[i].tier = req.Tier(c)
		}
	}
	for pi, p := range s.profile.Scores {
		if skipped(sc, s.scorePrep[pi]) {
			continue
		}
		norm := s.normalizers[pi]
		if norm == nil {
			for i, c := range feasible {
				if v, st := p.Score(req, c); st.IsSuccess() {
					cands[i].score += v
				}
			}
			continue
		}
		raw := slices.Grow(sc.raw[:0], n)[:n]
		for i, c := range feasible {
			v, st := p.Score(req, c)
			if !st.IsSuccess() {
				v = 0
			}
			raw[i] = v
		}
		if norm.NormalizeScore(req, feasible, raw).IsSuccess() {
			for i := range cands {
				cands[i].score += raw[i]
			}
		}
		sc.raw = raw
	}
	res.Feasible = make([]string, n)
	scores := slices.Grow(sc.raw[:0], n)[:n]
	for i, c := range feasible {
		res.Feasible[i] = c.Name
		scores[i] = cands[i].score
	}
	sc.raw = scores
	if snap := req.Snapshot; snap != nil {
		res.Scores = snap.ScoreMap(feasible, scores)
	} else {
		res.Scores = make(map[string]int64, n)
		for i, c := range feasible {
			res.Scores[c.Name] = scores[i]
		}
	}
	sc.cands = cands
	return cands
}

// capacityMatters reports whether free capacity or the candidate order can
// change the result: dynamic and cost-optimised division, spread
// selection, overflow tiers. Duplicated and static weights without spread
// constraints depend on neither (their output is sorted by name and
// Webster ties are broken by seats and name), so the estimate and the sort
// are skipped for them.
func capacityMatters(req *framework.Request, strategy policy.StrategyKind) bool {
	switch {
	case strategy == policy.StrategyDynamicWeight, strategy == policy.StrategyAggregated,
		strategy == policy.StrategyCostOptimized:
		return true
	case len(req.Affinities) > 1:
		return true
	case len(req.Placement.SpreadConstraints) > 0 && !staticForSpread(req.Placement):
		return true
	}
	return false
}

// orderMatters reports whether the candidate order can change the result
// of a strategy capacityMatters is true for. DynamicWeight without spread
// constraints and overflow tiers divides with Webster, whose seats follow
// from a total order on (priority, seats, name) whatever order the
// parties come in, and explains the division by name or in totals: the
// sort is skipped for it.
func orderMatters(req *framework.Request, strategy policy.StrategyKind) bool {
	return strategy != policy.StrategyDynamicWeight || len(req.Affinities) > 1 || len(req.Placement.SpreadConstraints) > 0
}

func estimateCapacity(req *framework.Request, cands []candidate) {
	e := newEstimator(req.Binding, req.Workload)
	for i := range cands {
		cands[i].free = e.freeOf(cands[i].c)
		cands[i].avail = cands[i].free + cands[i].prev
	}
}

// orderCandidates sorts by overflow tier ascending, score descending,
// AvailableReplicas descending, name ascending (reference §4.1). The key
// is total, so the order does not depend on the snapshot's order. cands
// is in name order (it follows the feasible clusters), so a candidate's
// position stands in for its name: the sort compares integers only, on
// compact keys, and then moves the candidates once.
func orderCandidates(cands []candidate, sc *scratch) []candidate {
	if packed, ok := packOrder(cands, sc.packed); ok {
		out := slices.Grow(sc.sorted[:0], len(cands))
		mask := uint64(1)<<bits.Len64(uint64(len(cands)-1)) - 1
		for _, k := range packed {
			out = append(out, cands[k&mask])
		}
		sc.packed, sc.sorted, sc.cands = packed, cands, out
		return out
	}
	keys := sc.keys[:0]
	for i := range cands {
		c := &cands[i]
		keys = append(keys, orderKey{tier: int32(c.tier), at: int32(i), score: c.score, avail: c.avail})
	}
	slices.SortFunc(keys, compareKeys)
	out := slices.Grow(sc.sorted[:0], len(cands))
	for _, k := range keys {
		out = append(out, cands[k.at])
	}
	sc.keys, sc.sorted, sc.cands = keys, cands, out
	return out
}

// orderKey is a candidate's sort key; at is its position in name order.
type orderKey struct {
	tier  int32
	at    int32
	score int64
	avail int64
}

func compareKeys(a, b orderKey) int {
	switch {
	case a.tier != b.tier:
		return cmpInt(int64(a.tier), int64(b.tier))
	case a.score != b.score:
		return cmpInt(b.score, a.score)
	case a.avail != b.avail:
		return cmpInt(b.avail, a.avail)
	}
	return cmpInt(int64(a.at), int64(b.at))
}

func compareCandidates(a, b candidate) int { return compareCandidatePtrs(&a, &b) }

func compareCandidatePtrs(a, b *candidate) int {
	switch {
	case a.tier != b.tier:
		return cmpInt(a.tier, b.tier)
	case a.score != b.score:
		return cmpInt(b.score, a.score)
	case a.avail != b.avail:
		return cmpInt(b.avail, a.avail)
	}
	return cmpString(a.name(), b.name())
}

func cmpInt[T int | int64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func quote(s string) string { return `"` + s + `"` }
