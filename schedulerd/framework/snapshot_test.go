package framework

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events/policy"
)

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
	if len(snap.diagnoses.byHash) == 0 {
		t.Errorf("no diagnosis was remembered: the test does not cover copying")
	}
}

// A snapshot derived WithAllocating answers every capacity question as a
// snapshot built afresh from the changed figures, and shares the answers
// that do not depend on capacity with its parent.
func TestWithAllocatingAnswersAsAFreshSnapshot(t *testing.T) {
	res := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	clusters := []ClusterInfo{
		{Name: "c3", Labels: map[string]string{"env": "prod"}, Allocatable: res("cpu", "8", "memory", "16Gi", "pods", "110", "nvidia.com/gpu", "2"), Allocated: res("cpu", "1")},
		{Name: "c1", Labels: map[string]string{"env": "prod"}, Allocatable: res("cpu", "4", "memory", "8Gi", "pods", "110"), Allocating: res("cpu", "500m")},
		{Name: "c2", Labels: map[string]string{"env": "dev"}, Allocatable: res("cpu", "2", "pods", "10")},
	}
	parent := NewSnapshot(clusters)
	aff := compiledAffinity(&policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}})
	parent.Bind(aff)
	change := map[string]corev1.ResourceList{"c1": res("cpu", "3", "pods", "7"), "c3": res("nvidia.com/gpu", "1", "memory", "1Gi")}
	derivedSnap := parent.WithAllocating(change)
	changed := slices.Clone(clusters)
	for i := range changed {
		if a, ok := change[changed[i].Name]; ok {
			changed[i].Allocating = a
		}
	}
	fresh := NewSnapshot(changed)
	requests := [][]ResourceUnits{
		{{Name: "cpu", Value: 250}},
		{{Name: "cpu", Value: 100}, {Name: "memory", Value: 128 << 20}},
		{{Name: "nvidia.com/gpu", Value: 1}},
	}
	for i, c := range derivedSnap.View() {
		f := fresh.View()[i]
		if c.Name != f.Name {
			t.Fatalf("order: %s vs %s", c.Name, f.Name)
		}
		for _, name := range []corev1.ResourceName{"cpu", "memory", "pods", "nvidia.com/gpu", "ephemeral-storage"} {
			a, aok := c.Free(name)
			b, bok := f.Free(name)
			if a != b || aok != bok {
				t.Errorf("%s free %s: derived %d %v, fresh %d %v", c.Name, name, a, aok, b, bok)
			}
		}
		for _, r := range requests {
			if a, b := c.MaxReplicas(r), f.MaxReplicas(r); a != b {
				t.Errorf("%s max replicas for %v: derived %d, fresh %d", c.Name, r, a, b)
			}
		}
		if aff.Matches(c) != (c.Labels["env"] == "prod") {
			t.Errorf("%s: the parent's bound affinity must answer for the derived snapshot", c.Name)
		}
	}
	if hits := aff.Hits(derivedSnap.View()); len(hits) != 3 || !hits[0] || hits[1] || !hits[2] {
		t.Errorf("hits on the derived view: %v", hits)
	}
	if aff.Hits(fresh.View()) != nil {
		t.Error("an affinity bound to another family must not answer for a fresh snapshot's view")
	}
	// The parent is unchanged.
	if f, _ := parent.View()[0].Free("cpu"); f != 3500 {
		t.Errorf("parent c1 free cpu changed: %d", f)
	}
	// Shared diagnosis maps: a set seen on the parent is known to the child.
	reasons := [][]string{{"A: no"}, {"A: no"}, {"A: no"}}
	first := parent.DiagnosisMap(parent.View(), reasons)
	parent.DiagnosisMap(parent.View(), reasons)
	if m := derivedSnap.DiagnosisMap(derivedSnap.View(), reasons); len(m) != 3 || reflect.ValueOf(m).UnsafePointer() != reflect.ValueOf(parent.DiagnosisMap(parent.View(), reasons)).UnsafePointer() {
		t.Errorf("diagnosis map not shared with the parent: %v (first %v)", m, first)
	}
}

func compiledAffinity(a *policy.ClusterAffinity) *Affinity {
	c := CompileAffinity(a)
	return &c
}
