package core

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

// The packed sorts must give exactly the order of the comparison sorts
// they replace, including when the fields span the whole int64 range (the
// fallback).
func TestPackedSortsMatchComparisonSorts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	value := func() int64 {
		switch r.IntN(6) {
		case 0:
			return math.MaxInt64 - r.Int64N(3)
		case 1:
			return math.MinInt64 + r.Int64N(3)
		case 2:
			return -r.Int64N(100)
		}
		return r.Int64N(1 + r.Int64N(1<<uint(r.IntN(40))))
	}
	for i := range 20000 {
		n := r.IntN(40)
		cands := make([]candidate, n)
		for j := range cands {
			c := &framework.ClusterInfo{Name: fmt.Sprintf("c%03d", j)}
			cands[j] = candidate{c: c, rank: int32(j + 1), tier: []int{0, 0, 0, 1, 2, 1000}[r.IntN(6)], score: r.Int64N(3) * 50, avail: r.Int64N(20)}
			if i%3 == 0 {
				cands[j].score, cands[j].avail = value(), value()
			}
		}
		want := slices.Clone(cands)
		slices.SortFunc(want, compareCandidates)
		got := orderCandidates(slices.Clone(cands), new(scratch))
		for j := range want {
			if got[j].name() != want[j].name() {
				t.Fatalf("case %d: candidate order differs at %d: got %s, want %s", i, j, got[j].name(), want[j].name())
			}
		}

		parts := make([]party, n)
		for j := range parts {
			parts[j] = party{name: fmt.Sprintf("p%03d", j), weight: r.Int64N(5)}
			if i%3 == 0 {
				parts[j].weight = value()
			}
		}
		wantP := slices.Clone(parts)
		slices.SortStableFunc(wantP, func(a, b party) int { return cmp.Compare(b.weight, a.weight) })
		var keys []uint64
		var tmp []party
		sortByWeightDesc(parts, &keys, &tmp)
		if !slices.Equal(parts, wantP) {
			t.Fatalf("case %d: weight order differs:\n got %v\nwant %v", i, parts, wantP)
		}
	}
}

// websterReference is the plain definition: n times, the party first by
// priority, fewer seats, then name (in the tie direction) gets a seat.
func websterReference(n int64, parties []party, desc bool) {
	for ; n > 0; n-- {
		best := 0
		for i := 1; i < len(parties); i++ {
			a, b := &parties[i], &parties[best]
			qa, qb := priority(a), priority(b)
			switch {
			case qa != qb:
				if qa > qb {
					best = i
				}
			case a.seats != b.seats:
				if a.seats < b.seats {
					best = i
				}
			case desc && a.name > b.name, !desc && a.name < b.name:
				best = i
			}
		}
		parties[best].seats++
	}
}

// The heap, with ranks given or computed, gives the seats of the plain
// definition whenever names are distinct (with equal names the winner
// between them is arbitrary in both).
func TestWebsterMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 20000 {
		n := 1 + r.IntN(30)
		parties := make([]party, n)
		perm := r.Perm(n)
		for j := range parties {
			parties[j] = party{name: fmt.Sprintf("c%03d", perm[j]), weight: r.Int64N(6), seats: r.Int64N(3)}
			if i%2 == 0 {
				parties[j].rank = int32(perm[j] + 1)
			}
		}
		seats := r.Int64N(60)
		desc := r.IntN(2) == 0
		want := slices.Clone(parties)
		websterReference(seats, want, desc)
		got := slices.Clone(parties)
		webster(seats, got, desc)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d (%d seats, desc %v):\n got %v\nwant %v", i, seats, desc, got, want)
		}
	}
}
