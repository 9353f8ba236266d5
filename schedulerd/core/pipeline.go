package core

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// The pipeline of one scheduling pass: prepare, filter, score, order.

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
		for _, r := range failedPrepare {
			rs = addReason(rs, []string{r})
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
	res.Scores = events.NewClusterScores(res.Feasible, slices.Clone(scores))
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

func estimateCapacity(req *framework.Request, multi bool, cands []candidate) {
	if multi {
		// Whole component sets (reference features §3.2.2); a set is
		// never "previously placed" replicas.
		e := newSetEstimator(req.Binding.Components)
		for i := range cands {
			cands[i].free = e.setsOf(cands[i].c)
			cands[i].avail = cands[i].free
		}
		return
	}
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
		return cmp.Compare(int64(a.tier), int64(b.tier))
	case a.score != b.score:
		return cmp.Compare(b.score, a.score)
	case a.avail != b.avail:
		return cmp.Compare(b.avail, a.avail)
	}
	return cmp.Compare(int64(a.at), int64(b.at))
}

func compareCandidates(a, b candidate) int { return compareCandidatePtrs(&a, &b) }

func compareCandidatePtrs(a, b *candidate) int {
	switch {
	case a.tier != b.tier:
		return cmp.Compare(a.tier, b.tier)
	case a.score != b.score:
		return cmp.Compare(b.score, a.score)
	case a.avail != b.avail:
		return cmp.Compare(b.avail, a.avail)
	}
	return cmp.Compare(a.name(), b.name())
}

func quote(s string) string { return `"` + s + `"` }
