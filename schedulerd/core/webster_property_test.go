package core

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// websterOneSeatAtATime is Webster as schedulerd divided until issue 12:
// the heap hands out every one of the n seats, one at a time, so its cost
// grows with n. It is the oracle webster must match. It counts the
// priorities it computes in h.evals, as webster does.
func websterOneSeatAtATime(h *websterHeap, n int64, parties []party, desc bool) {
	if n <= 0 || len(parties) == 0 {
		return
	}
	h.rankNames(parties, desc)
	h.oneAtATime(n, parties)
}

// evalBound is the most priorities webster may compute for a division
// among p parties, whatever the number of seats: a constant per party.
func evalBound(p int) int64 { return 16*int64(p) + 16 }

// randomParties draws a division: 1 to 50 parties whose weights are small
// (many ties, zeros), all equal, large, powers of two, zeros among
// multiples of one weight, or all zero; some hold seats already; the
// parties carry name ranks or not.
func randomParties(r *rand.Rand) []party {
	c := 1 + r.IntN(50)
	perm := r.Perm(c)
	kind := r.IntN(6)
	common := 1 + r.Int64N(1000)
	ranked := r.IntN(2) == 0
	holding := r.IntN(3) == 0
	out := make([]party, c)
	for j := range out {
		var w int64
		switch kind {
		case 0:
			w = r.Int64N(6)
		case 1:
			w = common
		case 2:
			w = r.Int64N(1_000_000_000)
		case 3:
			w = int64(1) << r.IntN(40)
		case 4:
			if r.IntN(3) > 0 {
				w = common * (1 + r.Int64N(3))
			}
		case 5:
			w = 0
		}
		out[j] = party{name: fmt.Sprintf("c%03d", perm[j]), weight: w}
		if holding && r.IntN(2) == 0 {
			out[j].seats = r.Int64N(1 + r.Int64N(10_000))
		}
		if ranked {
			out[j].rank = int32(perm[j] + 1)
		}
	}
	return out
}

// Over random divisions of up to 10^5 seats, webster gives every party the
// seats the one-seat-at-a-time method gives it (ties included), computing
// at most a constant number of priorities per party.
func TestWebsterMatchesOneSeatAtATime(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 1))
	for i := range 1500 {
		parties := randomParties(r)
		n := r.Int64N(int64(1) << r.IntN(18)) // log-uniform, up to 131071
		desc := r.IntN(2) == 0
		want := slices.Clone(parties)
		websterOneSeatAtATime(new(websterHeap), n, want, desc)
		got := slices.Clone(parties)
		var h websterHeap
		h.run(n, got, desc)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(party{})); diff != "" {
			t.Fatalf("case %d (%d seats, desc %v), -one at a time +webster:\n%s", i, n, desc, diff)
		}
		if h.evals > evalBound(len(parties)) {
			t.Fatalf("case %d (%d seats over %d parties): %d priorities computed, want at most %d", i, n, len(parties), h.evals, evalBound(len(parties)))
		}
	}
}

// The one-seat-at-a-time oracle and webster agree on the reference's
// examples (§2.3) with seats already held and both tie directions.
func TestWebsterMatchesOneSeatAtATimeOnEdgeCases(t *testing.T) {
	tests := []struct {
		name    string
		parties []party
		n       int64
	}{
		{"a single party takes every seat", []party{{name: "a", weight: 7}}, 100_000},
		{"a single party of weight 0 takes every seat", []party{{name: "a"}}, 1000},
		{"parties of weight 0 take seats by fewest seats, then name", []party{{name: "a", seats: 5}, {name: "b"}, {name: "c", seats: 2}, {name: "d", seats: 9}}, 20},
		{"parties of weight 0 get nothing beside a positive weight", []party{{name: "a"}, {name: "b", weight: 1}, {name: "c"}}, 5000},
		{"equal weights split by name order", []party{{name: "a", weight: 5}, {name: "b", weight: 5}, {name: "c", weight: 5}}, 100_001},
		{"a party far above its share gets nothing more", []party{{name: "a", weight: 1, seats: 90_000}, {name: "b", weight: 1}, {name: "c", weight: 2}}, 50_000},
		{"weights far beyond float64 precision", []party{{name: "a", weight: math.MaxInt64 / 3}, {name: "b", weight: math.MaxInt64/3 - 1}, {name: "c", weight: 1}}, 99_999},
		{"powers of two tie at many seats", []party{{name: "a", weight: 1 << 20}, {name: "b", weight: 1 << 19}, {name: "c", weight: 1 << 18}, {name: "d", weight: 1 << 18}}, 77_777},
	}
	for _, tt := range tests {
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s (desc %v)", tt.name, desc), func(t *testing.T) {
				want := slices.Clone(tt.parties)
				websterOneSeatAtATime(new(websterHeap), tt.n, want, desc)
				got := slices.Clone(tt.parties)
				webster(tt.n, got, desc)
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(party{})); diff != "" {
					t.Errorf("-one at a time +webster:\n%s", diff)
				}
			})
		}
	}
}

// Dividing 2^31-1 replicas (the int32 maximum, which Kubernetes accepts)
// froze schedulerd for 40 s when Webster handed out one seat at a time.
// The measure here is work, not time: webster counts the priorities it
// computes, and a division must compute a constant number per cluster,
// not one per replica.
func TestDivisionOfTheInt32MaximumFinishesQuickly(t *testing.T) {
	thousand := make([]party, 1000)
	for i := range thousand {
		thousand[i] = party{name: fmt.Sprintf("member-%04d", i), weight: int64(1 + i%7)}
	}
	tests := []struct {
		name    string
		parties []party
		want    []int64 // nil: only the sum is checked
	}{
		{"3:2:1 over three clusters", []party{{name: "m1", weight: 3}, {name: "m2", weight: 2}, {name: "m3", weight: 1}}, []int64{1073741824, 715827882, 357913941}},
		{"weights 1 to 7 over 1,000 clusters", thousand, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parties := slices.Clone(tt.parties)
			var h websterHeap
			h.run(math.MaxInt32, parties, false)
			if h.evals > evalBound(len(parties)) {
				t.Errorf("%d priorities computed for %d clusters, want at most %d", h.evals, len(parties), evalBound(len(parties)))
			}
			var sum int64
			got := make([]int64, len(parties))
			for i, p := range parties {
				got[i] = p.seats
				sum += p.seats
			}
			if sum != math.MaxInt32 {
				t.Errorf("the seats sum to %d, want %d", sum, math.MaxInt32)
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("seats (-want +got):\n%s", diff)
				}
			}
		})
	}
	// The count is the one that grows with the replicas when seats are
	// handed out one at a time.
	var h websterHeap
	websterOneSeatAtATime(&h, 100_000, []party{{name: "m1", weight: 3}, {name: "m2", weight: 2}, {name: "m3", weight: 1}}, false)
	if h.evals < 100_000 {
		t.Errorf("one seat at a time over 100000 seats counted %d priorities, want at least 100000", h.evals)
	}
}

// Beyond what the oracle can check quickly: up to 2^31-1 seats over up to
// 1,000 parties with weights up to 2^62, the seats sum to n, no party
// loses a seat it held, and raising one party's weight never lowers its
// share.
func TestWebsterInvariantsAtLargeScale(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2))
	for i := range 300 {
		c := 1 + r.IntN(1000)
		maxW := int64(1) << (1 + r.IntN(62))
		parties := make([]party, c)
		var held int64
		for j := range parties {
			parties[j] = party{name: fmt.Sprintf("c%04d", j), weight: r.Int64N(maxW)}
			if r.IntN(10) == 0 {
				parties[j].seats = r.Int64N(1_000_000)
				held += parties[j].seats
			}
		}
		n := r.Int64N(math.MaxInt32) + 1
		if r.IntN(4) == 0 {
			n = math.MaxInt32
		}
		desc := r.IntN(2) == 0
		got := slices.Clone(parties)
		var h websterHeap
		h.run(n, got, desc)
		var sum int64
		for j, p := range got {
			sum += p.seats
			if p.seats < parties[j].seats {
				t.Fatalf("case %d: %s went from %d seats to %d", i, p.name, parties[j].seats, p.seats)
			}
		}
		if sum != held+n {
			t.Fatalf("case %d: %d seats over %d parties sum to %d, want %d", i, n, c, sum-held, n)
		}
		if h.evals > evalBound(c) {
			t.Fatalf("case %d: %d priorities computed for %d parties, want at most %d", i, h.evals, c, evalBound(c))
		}

		j := r.IntN(c)
		raised := slices.Clone(parties)
		raised[j].weight += 1 + r.Int64N(max(1, raised[j].weight))
		webster(n, raised, desc)
		if raised[j].seats < got[j].seats {
			t.Fatalf("case %d: raising %s's weight from %d to %d lowered its seats from %d to %d",
				i, got[j].name, got[j].weight, raised[j].weight, got[j].seats, raised[j].seats)
		}
	}
}
