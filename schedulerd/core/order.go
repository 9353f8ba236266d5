package core

import (
	"cmp"
	"math/bits"
	"slices"
)

// Sorting by several integer fields with a comparison function costs an
// indirect call and several branches per comparison. When the fields'
// ranges fit together in 64 bits, the sorts below pack each element's
// fields and its position into one uint64 whose ascending order is the
// wanted order (positions make the keys unique, so the order is total and
// a plain sort is stable), sort the integers, and read the positions back.

// width is the number of bits the values lo..hi take once shifted by lo.
func width(lo, hi int64) uint {
	return uint(bits.Len64(uint64(hi) - uint64(lo)))
}

// packOrder sorts cands by tier ascending, score descending, avail
// descending, position ascending, into keys; ok is false when the fields
// do not fit in 64 bits.
func packOrder(cands []candidate, keys []uint64) ([]uint64, bool) {
	if len(cands) == 0 {
		return keys[:0], true
	}
	c0 := &cands[0]
	minT, maxT := int64(c0.tier), int64(c0.tier)
	minS, maxS, minA, maxA := c0.score, c0.score, c0.avail, c0.avail
	for i := range cands {
		c := &cands[i]
		minT, maxT = min(minT, int64(c.tier)), max(maxT, int64(c.tier))
		minS, maxS = min(minS, c.score), max(maxS, c.score)
		minA, maxA = min(minA, c.avail), max(maxA, c.avail)
	}
	wn := uint(bits.Len64(uint64(len(cands) - 1)))
	wa, ws, wt := width(minA, maxA), width(minS, maxS), width(minT, maxT)
	if wn+wa+ws+wt > 64 {
		return keys, false
	}
	keys = keys[:0]
	for i := range cands {
		c := &cands[i]
		keys = append(keys, uint64(int64(c.tier)-minT)<<(ws+wa+wn)|
			(uint64(maxS)-uint64(c.score))<<(wa+wn)|
			(uint64(maxA)-uint64(c.avail))<<wn|
			uint64(i))
	}
	slices.Sort(keys)
	return keys, true
}

// sortByWeightDesc is slices.SortStableFunc(parts, weight descending),
// with keys and tmp as working memory.
func sortByWeightDesc(parts []party, keys *[]uint64, tmp *[]party) {
	if len(parts) < 2 {
		return
	}
	minW, maxW := parts[0].weight, parts[0].weight
	for i := range parts {
		minW, maxW = min(minW, parts[i].weight), max(maxW, parts[i].weight)
	}
	if minW == maxW {
		return // a stable sort keeps the order
	}
	wn := uint(bits.Len64(uint64(len(parts) - 1)))
	if width(minW, maxW)+wn > 64 {
		slices.SortStableFunc(parts, func(a, b party) int { return cmp.Compare(b.weight, a.weight) })
		return
	}
	ks := (*keys)[:0]
	for i := range parts {
		ks = append(ks, (uint64(maxW)-uint64(parts[i].weight))<<wn|uint64(i))
	}
	slices.Sort(ks)
	from := append((*tmp)[:0], parts...)
	mask := uint64(1)<<wn - 1
	for k, key := range ks {
		parts[k] = from[key&mask]
	}
	*keys, *tmp = ks, from
}
