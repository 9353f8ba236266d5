package core

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// party is one cluster in an apportionment: its weight ("votes") and the
// seats (replicas) it holds.
type party struct {
	name   string
	weight int64
	seats  int64
	// rank is 1 + the position of name in the name order of the
	// decision's feasible clusters (candidate.at), or 0 when unknown;
	// webster then ranks the names itself.
	rank int32
}

// tieDescending reports the name direction of Webster ties for a resource
// UID (reference §2.3 rule 3): FNV-1a-32 of the UID odd -> larger name
// wins; even or empty UID -> smaller name wins.
func tieDescending(uid string) bool {
	if uid == "" {
		return false
	}
	h := uint32(2166136261) // FNV-1a-32, as hash/fnv's New32a, without allocating
	for i := 0; i < len(uid); i++ {
		h ^= uint32(uid[i])
		h *= 16777619
	}
	return h&1 == 1
}

// webster gives n more seats to parties by Webster's method (Sainte-Laguë
// divisors 1, 3, 5, ...), starting from the parties' current seats
// (reference §2.3): the result is that of handing out the seats one at a
// time, each to the party with the highest priority weight/(2*seats+1),
// ties to the party with fewer seats, then by name in the direction desc
// says. Priorities are compared as float64 quotients, as Karmada does.
// Weights and seats must not be negative, and seats + n must stay below
// 2^61.
//
// Its cost does not depend on n: O(p log p) for p parties (see
// websterHeap.bulk), so that 2^31-1 replicas cost no more to divide than
// a thousand.
func webster(n int64, parties []party, desc bool) {
	var h websterHeap
	h.run(n, parties, desc)
}

// websterHeap is webster's working memory, kept between calls for its
// buffers. The heap holds each party's priority, seats and name rank
// inline, so that comparing two parties reads neither the parties nor
// their names.
type websterHeap struct {
	items []heapItem
	order []int32   // for ranking names and sorting breakpoints
	bp    []float64 // per party: where it starts to win seats (estimate)
	give  []int64   // per party: the seats bulk hands out
	// evals counts the priorities computed since the heap was made (one
	// per seat handed out one at a time, one per check of a bulk
	// threshold): the measure of the work, which tests hold to O(parties)
	// per division.
	evals int64
}

type heapItem struct {
	pri   float64 // priority(&parties[party]), kept current
	seats int64
	// tie is the name's dense rank in the winning direction: a smaller
	// tie wins, equal names have equal ties.
	tie   int32
	party int32
}

// run is webster on h's buffers: bulk hands out all but a few seats per
// party, and the heap the rest, one at a time.
func (h *websterHeap) run(n int64, parties []party, desc bool) {
	if n <= 0 || len(parties) == 0 {
		return
	}
	h.rankNames(parties, desc)
	n = h.bulk(n, parties)
	h.oneAtATime(n, parties)
}

// oneAtATime hands out n seats one at a time, each to the party first by
// priority, fewer seats, then name rank, with a binary heap: O(p + n log p)
// for p parties. The name ranks are rankNames's.
func (h *websterHeap) oneAtATime(n int64, parties []party) {
	if n <= 0 {
		return
	}
	items := h.items
	h.evals += int64(len(items)) + n
	for i := range items {
		items[i].pri = priority(&parties[i])
		items[i].seats = parties[i].seats
		items[i].party = int32(i)
	}
	for i := len(items)/2 - 1; i >= 0; i-- {
		down(items, i)
	}
	for ; n > 0; n-- {
		top := &items[0]
		p := &parties[top.party]
		p.seats++
		top.seats = p.seats
		top.pri = priority(p)
		down(items, 0)
	}
}

// bulk hands out, in one step per party, every seat whose priority is
// above a threshold t, and returns how many of the n seats are left for
// the heap: at most about 4 per party with a positive weight.
//
// Why the heap, continuing from there, gives the one-at-a-time result: a
// party's successive seats have strictly decreasing keys (priority, then
// fewer seats, then name), since float64(w)/float64(2s+1) never grows with
// s while s grows; handing seats out one at a time therefore gives the n
// largest keys of all the parties. The seats with priority above t are a
// prefix of each party's sequence and, when there are at most n of them,
// among those n largest; the heap then takes the largest of the rest, as
// the one-at-a-time method does.
//
// t comes from estimate; the seats above it are counted exactly, with the
// float64 quotients the heap compares. Should the count miss (more than n,
// or far fewer), a bisection over the float64 values finds t instead.
func (h *websterHeap) bulk(n int64, parties []party) int64 {
	var positive int64
	maxPri := 0.0
	negative := false
	for i := range parties {
		switch w := parties[i].weight; {
		case w > 0:
			positive++
			maxPri = max(maxPri, priority(&parties[i]))
		case w < 0:
			negative = true
		}
	}
	h.evals += positive
	if positive == 0 {
		if negative {
			return n // outside webster's contract: one at a time
		}
		h.fillEqual(n, parties)
		return 0
	}
	slack := 4*positive + 4
	if n <= slack {
		return n
	}
	// m: the real count below is m to m+positive; the exact one differs
	// from it by at most a seat per party (a key within a rounding of t).
	t := h.estimate(n-2*positive-2, parties)
	given := h.above(t, n, parties)
	if given > n || n-given > slack {
		t = h.bisect(n, parties, maxPri)
		given = h.above(t, n, parties)
	}
	for i, g := range h.give {
		parties[i].seats += g
	}
	return n - given
}

// estimate returns a threshold t = 1/u with, in real numbers, m seats of
// priority above it: a party with weight w and s seats has
// max(0, ceil((w·u-1)/2) - s) of them, at least max(0, (w·u-1)/2 - s) and
// less than that + 1. The sum of the lower bounds is piecewise linear in u,
// with a piece starting where each party's term turns positive
// (u = (2s+1)/w): sorting these breakpoints (O(p log p)) and walking them
// finds the piece where it reaches m. m must not be negative and some
// weight must be positive.
func (h *websterHeap) estimate(m int64, parties []party) float64 {
	bp := slices.Grow(h.bp[:0], len(parties))[:len(parties)]
	order := h.order[:0]
	for i := range parties {
		if w := parties[i].weight; w > 0 {
			bp[i] = float64(2*parties[i].seats+1) / float64(w)
			order = append(order, int32(i))
		}
	}
	h.bp, h.order = bp, order
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(bp[a], bp[b]) })
	// On the piece where the parties order[:k+1] count, the sum is
	// (Σw·u - Σ(2s+1))/2.
	var sumW, sumS float64
	for k, i := range order {
		sumW += float64(parties[i].weight)
		sumS += float64(2*parties[i].seats + 1)
		u := (2*float64(m) + sumS) / sumW
		if k+1 == len(order) || u <= bp[order[k+1]] {
			return 1 / u
		}
	}
	return 0
}

// above counts the seats, beyond the ones the parties hold, whose priority
// is above t, into h.give per party, and returns their sum; it stops
// counting once the sum exceeds n.
func (h *websterHeap) above(t float64, n int64, parties []party) int64 {
	give := slices.Grow(h.give[:0], len(parties))[:len(parties)]
	h.give = give
	clear(give)
	var total int64
	for i := range parties {
		p := &parties[i]
		if p.weight <= 0 {
			continue
		}
		if e := h.seatsAbove(p.weight, t, p.seats+n+1); e > p.seats {
			give[i] = e - p.seats
			total += give[i]
			if total > n {
				return total
			}
		}
	}
	return total
}

// seatsAbove returns how many seats s = 0, 1, 2, ... of a party of weight
// w > 0 have a priority float64(w)/float64(2s+1) above t, at most limit.
// The real solution of w/(2s+1) = t is within a rounding of the answer:
// the loops correct it in a step or two, and make it exact.
func (h *websterHeap) seatsAbove(w int64, t float64, limit int64) int64 {
	fw := float64(w)
	x := (fw/t - 1) / 2
	var s int64
	switch {
	case !(x < float64(limit)): // +Inf when t is 0
		s = limit
	case x <= 0:
		s = 0
	default:
		s = int64(math.Ceil(x))
	}
	for s > 0 && !h.isAbove(fw, s-1, t) {
		s--
	}
	for s < limit && h.isAbove(fw, s, t) {
		s++
	}
	return s
}

// isAbove reports whether seat s of a party of weight fw has a priority
// above t.
func (h *websterHeap) isAbove(fw float64, s int64, t float64) bool {
	h.evals++
	return fw/float64(2*s+1) > t
}

// bisect returns the smallest float64 t with at most n seats above it:
// float64 values that are not negative order as their bits do, so 64
// counts at most. Some weight must be positive and maxPri the largest
// priority.
func (h *websterHeap) bisect(n int64, parties []party, maxPri float64) float64 {
	// Above 0 lie all the seats of a positive weight; above maxPri none.
	lo, hi := uint64(0), math.Float64bits(maxPri)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if h.above(math.Float64frombits(mid), n, parties) <= n {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Float64frombits(hi)
}

// fillEqual is webster when every weight is 0: every priority is 0, so
// each seat goes to a party with the fewest seats, first by name. The
// parties are raised to the highest level n seats reach, and the seats
// left over go one each to the parties then at that level, by name.
func (h *websterHeap) fillEqual(n int64, parties []party) {
	order := h.order[:0]
	for i := range parties {
		order = append(order, int32(i))
	}
	h.order = order
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(parties[a].seats, parties[b].seats) })
	// The k+1 parties with the fewest seats, raised to level, take
	// (k+1)·level - below seats.
	var level, below int64
	for k, i := range order {
		below += parties[i].seats
		level = (n + below) / int64(k+1)
		if k+1 == len(order) || level < parties[order[k+1]].seats {
			break
		}
	}
	at := order[:0]
	for i := range parties {
		if p := &parties[i]; p.seats <= level {
			n -= level - p.seats
			p.seats = level
			at = append(at, int32(i))
		}
	}
	items := h.items
	slices.SortFunc(at, func(a, b int32) int { return cmp.Compare(items[a].tie, items[b].tie) })
	for _, i := range at[:n] {
		parties[i].seats++
	}
}

// rankNames sizes h.items to the parties and sets items[i].tie from the
// names of parties: their rank in name order (equal names, equal ranks),
// reversed when desc. It uses the parties' ranks when all have one.
func (h *websterHeap) rankNames(parties []party, desc bool) {
	items := slices.Grow(h.items[:0], len(parties))[:len(parties)]
	h.items = items
	known := true
	maxRank := int32(0)
	for i := range parties {
		r := parties[i].rank
		if r <= 0 {
			known = false
			break
		}
		items[i].tie = r
		maxRank = max(maxRank, r)
	}
	if !known {
		order := slices.Grow(h.order[:0], len(parties))
		for i := range parties {
			order = append(order, int32(i))
		}
		h.order = order
		slices.SortFunc(order, func(a, b int32) int { return strings.Compare(parties[a].name, parties[b].name) })
		rank := int32(0)
		for k, i := range order {
			if k == 0 || parties[i].name != parties[order[k-1]].name {
				rank++
			}
			items[i].tie = rank
		}
		maxRank = rank
	}
	if desc {
		for i := range items {
			items[i].tie = maxRank - items[i].tie
		}
	}
}

// priority is the party's Sainte-Laguë quotient for its next seat.
func priority(p *party) float64 {
	return float64(p.weight) / float64(2*p.seats+1)
}

// before reports whether a gets the next seat ahead of b.
func before(a, b *heapItem) bool {
	if a.pri != b.pri {
		return a.pri > b.pri
	}
	if a.seats != b.seats {
		return a.seats < b.seats
	}
	return a.tie < b.tie
}

// down moves items[i] down to its place: the children that win are moved
// up one level each and the item is written once, where it stops (the
// same moves as swapping it down, with half the copying).
func down(items []heapItem, i int) {
	n := len(items)
	it := items[i]
	for {
		best := 2*i + 1
		if best >= n {
			break
		}
		if r := best + 1; r < n && before(&items[r], &items[best]) {
			best = r
		}
		if !before(&items[best], &it) {
			break
		}
		items[i] = items[best]
		i = best
	}
	items[i] = it
}
