package framework

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ScoreMap gives the map of names to scores, whatever it remembers from
// earlier calls, for clusters of the snapshot or not, concurrently.
func TestScoreMap(t *testing.T) {
	cs := make([]ClusterInfo, 150)
	for i := range cs {
		cs[i] = ClusterInfo{Name: fmt.Sprintf("c%03d", i)}
	}
	snap := NewSnapshot(cs)
	other := NewSnapshot(cs[:10])
	view := snap.View()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 3000 {
				var clusters []*ClusterInfo
				keep := r.IntN(4) // a few recurring sets
				for i, c := range view {
					if (i+keep)%(keep+2) != 0 || r.IntN(50) == 0 {
						clusters = append(clusters, c)
					}
				}
				if r.IntN(20) == 0 {
					clusters = append(clusters[:len(clusters):len(clusters)], other.View()[r.IntN(10)])
				}
				scores := make([]int64, len(clusters))
				for i := range scores {
					if r.IntN(3) == 0 {
						scores[i] = r.Int64N(300) - 100
					}
				}
				want := make(map[string]int64, len(clusters))
				for i, c := range clusters {
					want[c.Name] = scores[i]
				}
				if got := snap.ScoreMap(clusters, scores); !maps.Equal(got, want) {
					t.Errorf("ScoreMap = %v, want %v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(snap.templates) == 0 {
		t.Errorf("no set was remembered: the test does not cover copying")
	}
}

// Units reads whole quantities directly: it must agree with MilliValue
// (cpu) and Value (the rest) on every quantity.
func TestUnitsAgreesWithQuantity(t *testing.T) {
	for _, s := range []string{"0", "1", "4", "250m", "1500m", "0.5", "128Mi", "1Gi", "1k", "1M", "1e3", "3e-3", "9223372036854775807", "9223372036854775", "9223372036854776", "-2", "-1500m", "1.000000001", "100Ti", "1Ei"} {
		q := resource.MustParse(s)
		if got, want := Units(corev1.ResourceCPU, q), q.MilliValue(); got != want {
			t.Errorf("cpu %s: Units %d, MilliValue %d", s, got, want)
		}
		if got, want := Units(corev1.ResourceMemory, q), q.Value(); got != want {
			t.Errorf("memory %s: Units %d, Value %d", s, got, want)
		}
	}
}

// DiagnosisMap gives the map of names to reasons, the very slices given,
// whatever it remembers from earlier calls, concurrently.
func TestDiagnosisMap(t *testing.T) {
	cs := make([]ClusterInfo, 90)
	for i := range cs {
		cs[i] = ClusterInfo{Name: fmt.Sprintf("c%03d", i)}
	}
	snap := NewSnapshot(cs)
	view := snap.View()
	lines := [][]string{{"A: one"}, {"B: two"}, {"A: one", "B: two"}}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			for range 3000 {
				var clusters []*ClusterInfo
				var reasons [][]string
				keep := r.IntN(3)
				for i, c := range view {
					if (i+keep)%(keep+2) == 0 {
						clusters = append(clusters, c)
						l := lines[(i+keep)%len(lines)]
						if r.IntN(40) == 0 {
							l = []string{l[0]} // same text, another slice
						}
						reasons = append(reasons, l)
					}
				}
				got := snap.DiagnosisMap(clusters, reasons)
				if len(got) != len(clusters) {
					t.Errorf("DiagnosisMap has %d entries, want %d", len(got), len(clusters))
					return
				}
				for i, c := range clusters {
					if g := got[c.Name]; len(g) != len(reasons[i]) || &g[0] != &reasons[i][0] {
						t.Errorf("%s: DiagnosisMap gives %v (%p), want %v (%p)", c.Name, g, g, reasons[i], reasons[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if len(snap.diagnoses) == 0 {
		t.Errorf("no diagnosis was remembered: the test does not cover copying")
	}
}
