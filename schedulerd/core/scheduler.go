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
	"slices"

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
	// Clusters is the snapshot; names must be unique.
	Clusters []framework.ClusterInfo
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
	// "<Plugin>: <reason>". The slices may be shared between clusters;
	// treat them as read-only.
	Diagnosis map[string][]string
	// Scores: every feasible cluster -> the sum of the score plugins.
	Scores map[string]int64
	// Division explains the replica arithmetic in one line.
	Division string
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
}

// New returns a scheduler running the given profile.
func New(p framework.Profile) *Scheduler {
	s := &Scheduler{profile: p}
	seen := map[string]bool{}
	add := func(pl framework.Plugin) {
		if pp, ok := pl.(framework.PreparePlugin); ok && !seen[pp.Name()] {
			seen[pp.Name()] = true
			s.prepares = append(s.prepares, pp)
		}
	}
	for _, f := range p.Filters {
		add(f)
	}
	for _, sc := range p.Scores {
		add(sc)
	}
	return s
}

// Schedule decides the placement of in.Binding. With clusterAffinities it
// tries the terms in order from the observed one (the first one after an
// explicit reschedule); the first term that schedules wins, and if none
// does the first failure is returned (reference §1.2).
func (s *Scheduler) Schedule(in Input) Result {
	pl := placementOf(&in.Binding)
	terms := pl.ClusterAffinities
	if len(terms) == 0 {
		return s.scheduleTerm(&in, &pl, -1)
	}
	start := 0
	if !in.Fresh {
		start = max(0, slices.IndexFunc(terms, func(t policy.ClusterAffinityTerm) bool {
			return t.AffinityName == in.ObservedAffinity
		}))
	}
	var first Result
	for i := start; i < len(terms); i++ {
		r := s.scheduleTerm(&in, &pl, i)
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

// scheduleTerm is one full scheduling pass with the given clusterAffinities
// term in force (-1: placement.clusterAffinity or none).
func (s *Scheduler) scheduleTerm(in *Input, pl *policy.Placement, term int) Result {
	req := newRequest(in, pl, term)
	strategy := pl.Strategy()
	res := Result{Strategy: string(strategy), AffinityName: req.AffinityName}

	feasible := s.filter(req, in.Clusters, &res)
	if len(feasible) == 0 {
		res.Unfit = true
		res.Error = fitError(len(in.Clusters), res.Diagnosis)
		return res
	}
	cands := s.score(req, feasible, &res)
	if capacityMatters(req, strategy) {
		estimateCapacity(req, cands)
		orderCandidates(cands)
	}

	selected, err := selectClusters(req, strategy, cands, &res.Warnings)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	targets, division, err := assignReplicas(req, strategy, selected, in, &res.Warnings)
	res.Division = division
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Scheduled = true
	res.Clusters = targets
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

// filter runs every filter plugin on every cluster and records every
// failure; a cluster is feasible only if all pass (reference §1 step 2).
func (s *Scheduler) filter(req *framework.Request, clusters []framework.ClusterInfo, res *Result) []*framework.ClusterInfo {
	var failedPrepare []string
	for _, p := range s.prepares {
		if st := p.Prepare(req); !st.IsSuccess() {
			for _, r := range st.Reasons {
				failedPrepare = append(failedPrepare, p.Name()+": "+r)
			}
		}
	}
	// Most filtered clusters fail one plugin for one shared reason: they
	// get one shared diagnosis slice instead of a string and a slice each.
	type reasonKey struct {
		plugin int
		reason string
	}
	shared := map[reasonKey][]string{}
	diagnosis := func(pi int, reason string) []string {
		k := reasonKey{pi, reason}
		d, ok := shared[k]
		if !ok {
			d = []string{s.profile.Filters[pi].Name() + ": " + reason}
			shared[k] = d
		}
		return d
	}
	feasible := make([]*framework.ClusterInfo, 0, len(clusters))
	for i := range clusters {
		c := &clusters[i]
		var reasons []string
		for pi, f := range s.profile.Filters {
			st := f.Filter(req, c)
			if st.IsSuccess() {
				continue
			}
			if len(st.Reasons) == 0 {
				reasons = addReason(reasons, diagnosis(pi, st.Code.String()))
			}
			for _, r := range st.Reasons {
				reasons = addReason(reasons, diagnosis(pi, r))
			}
		}
		for _, r := range failedPrepare {
			reasons = addReason(reasons, []string{r})
		}
		if len(reasons) == 0 {
			feasible = append(feasible, c)
			continue
		}
		if res.Diagnosis == nil {
			res.Diagnosis = make(map[string][]string)
		}
		res.Diagnosis[c.Name] = reasons
	}
	return feasible
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
	tier  int
	prev  int64 // replicas the binding has there now
	free  int64 // AllocatableReplicas: what the estimator says still fits
	avail int64 // AvailableReplicas: free + prev
}

func (c *candidate) name() string { return c.c.Name }

// score sums the score plugins per feasible cluster (reference §1 step 3).
func (s *Scheduler) score(req *framework.Request, feasible []*framework.ClusterInfo, res *Result) []candidate {
	cands := make([]candidate, len(feasible))
	res.Scores = make(map[string]int64, len(feasible))
	res.Feasible = make([]string, len(feasible))
	for i, c := range feasible {
		var total int64
		for _, p := range s.profile.Scores {
			if v, st := p.Score(req, c); st.IsSuccess() {
				total += v
			}
		}
		cands[i] = candidate{c: c, score: total, prev: int64(req.Previous[c.Name])}
		if len(req.Affinities) > 1 { // only overflow affinities make tiers other than 0
			cands[i].tier = req.Tier(c)
		}
		res.Scores[c.Name] = total
		res.Feasible[i] = c.Name
	}
	slices.Sort(res.Feasible)
	return cands
}

// capacityMatters reports whether free capacity or the candidate order can
// change the result: dynamic division, spread selection, overflow tiers.
// Duplicated and static weights without spread constraints depend on
// neither (their output is sorted by name and Webster ties are broken by
// seats and name), so the estimate and the sort are skipped for them.
func capacityMatters(req *framework.Request, strategy policy.StrategyKind) bool {
	switch {
	case strategy == policy.StrategyDynamicWeight, strategy == policy.StrategyAggregated:
		return true
	case len(req.Affinities) > 1:
		return true
	case len(req.Placement.SpreadConstraints) > 0 && !staticForSpread(req.Placement):
		return true
	}
	return false
}

func estimateCapacity(req *framework.Request, cands []candidate) {
	e := newEstimator(req.Binding, req.Workload)
	for i := range cands {
		c := cands[i].c
		cands[i].free = e.free(c.Allocatable, c.Allocated, c.Allocating)
		cands[i].avail = cands[i].free + cands[i].prev
	}
}

// orderCandidates sorts by overflow tier ascending, score descending,
// AvailableReplicas descending, name ascending (reference §4.1). The key
// is total, so the order does not depend on the snapshot's order.
func orderCandidates(cands []candidate) {
	slices.SortFunc(cands, compareCandidates)
}

func compareCandidates(a, b candidate) int {
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
