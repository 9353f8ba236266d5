package core

import (
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

// webster hands out n seats one at a time to the party with the highest
// priority weight/(2*seats+1) (Sainte-Laguë divisors 1, 3, 5, ...),
// starting from the parties' current seats (reference §2.3). Ties go to the
// party with fewer seats, then by name in the direction desc says. Priorities
// are compared as float64 quotients, as Karmada does. It runs in
// O(n log len(parties)) with a binary heap.
func webster(n int64, parties []party, desc bool) {
	var h websterHeap
	h.run(n, parties, desc)
}

// websterHeap is webster's binary heap, kept between calls for its
// buffers. The heap holds each party's priority, seats and name rank
// inline, so that comparing two parties reads neither the parties nor
// their names.
type websterHeap struct {
	items []heapItem
	order []int32 // for ranking names
}

type heapItem struct {
	pri   float64 // priority(&parties[party]), kept current
	seats int64
	// tie is the name's dense rank in the winning direction: a smaller
	// tie wins, equal names have equal ties.
	tie   int32
	party int32
}

// run is webster on h's buffers.
func (h *websterHeap) run(n int64, parties []party, desc bool) {
	if n <= 0 || len(parties) == 0 {
		return
	}
	items := slices.Grow(h.items[:0], len(parties))[:len(parties)]
	h.items = items
	h.rankNames(parties, desc)
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

// rankNames sets items[i].tie from the names of parties: their rank in
// name order (equal names, equal ranks), reversed when desc. It uses the
// parties' ranks when all have one.
func (h *websterHeap) rankNames(parties []party, desc bool) {
	items := h.items
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
