package core

import "hash/fnv"

// party is one cluster in an apportionment: its weight ("votes") and the
// seats (replicas) it holds.
type party struct {
	name   string
	weight int64
	seats  int64
}

// tieDescending reports the name direction of Webster ties for a resource
// UID (reference §2.3 rule 3): FNV-1a-32 of the UID odd -> larger name
// wins; even or empty UID -> smaller name wins.
func tieDescending(uid string) bool {
	if uid == "" {
		return false
	}
	h := fnv.New32a()
	h.Write([]byte(uid))
	return h.Sum32()&1 == 1
}

// webster hands out n seats one at a time to the party with the highest
// priority weight/(2*seats+1) (Sainte-Laguë divisors 1, 3, 5, ...),
// starting from the parties' current seats (reference §2.3). Ties go to the
// party with fewer seats, then by name in the direction desc says. Priorities
// are compared as float64 quotients, as Karmada does. It runs in
// O(n log len(parties)) with a binary heap and does not allocate beyond the
// heap's index and priority slices.
func webster(n int64, parties []party, desc bool) {
	if n <= 0 || len(parties) == 0 {
		return
	}
	h := websterHeap{p: parties, desc: desc, idx: make([]int32, len(parties)), pri: make([]float64, len(parties))}
	for i := range h.idx {
		h.idx[i] = int32(i)
		h.pri[i] = priority(&parties[i])
	}
	for i := len(h.idx)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	for ; n > 0; n-- {
		top := h.idx[0]
		parties[top].seats++
		h.pri[top] = priority(&parties[top])
		h.down(0)
	}
}

// priority is the party's Sainte-Laguë quotient for its next seat.
func priority(p *party) float64 {
	return float64(p.weight) / float64(2*p.seats+1)
}

type websterHeap struct {
	p    []party
	idx  []int32
	pri  []float64 // by party: priority(&p[i]), kept current
	desc bool
}

// before reports whether party a gets the next seat ahead of party b.
func (h *websterHeap) before(a, b int32) bool {
	pa, pb := &h.p[a], &h.p[b]
	qa, qb := h.pri[a], h.pri[b]
	if qa != qb {
		return qa > qb
	}
	if pa.seats != pb.seats {
		return pa.seats < pb.seats
	}
	if h.desc {
		return pa.name > pb.name
	}
	return pa.name < pb.name
}

func (h *websterHeap) down(i int) {
	n := len(h.idx)
	for {
		best := i
		l, r := 2*i+1, 2*i+2
		if l < n && h.before(h.idx[l], h.idx[best]) {
			best = l
		}
		if r < n && h.before(h.idx[r], h.idx[best]) {
			best = r
		}
		if best == i {
			return
		}
		h.idx[i], h.idx[best] = h.idx[best], h.idx[i]
		i = best
	}
}
