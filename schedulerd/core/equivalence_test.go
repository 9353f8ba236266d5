package core

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// resultsFile holds the Result of every case of TestResultsUnchanged, one
// line per case: {"case":N,"result":<the Result as JSON>}. The results
// are those of commit bb46c92, before the hot path was rewritten for
// speed. Rewrite the file only for an intended change of results, and
// review its diff:
//
//	go test ./schedulerd/core/ -run TestResultsUnchanged -update
const resultsFile = "testdata/results.golden.jsonl"

const equivalenceCases = 6000

// recordedResult is one line of resultsFile.
type recordedResult struct {
	Case   int             `json:"case"`
	Result json.RawMessage `json:"result"`
}

// TestResultsUnchanged schedules thousands of varied inputs (every
// strategy, spread constraints, clusterAffinities with overflow, taints,
// API lists, capacity and prices, previous results, evictions, fresh
// reschedules, unsorted clusters) and checks every Result against the one
// recorded in resultsFile, and the Clusters path against the Snapshot path.
func TestResultsUnchanged(t *testing.T) {
	s := newDefault()
	got := make([]string, equivalenceCases)
	for i := range got {
		in := variedInput(i)
		res := s.Schedule(in)
		snap := in
		snap.Clusters, snap.Snapshot = nil, framework.NewSnapshot(in.Clusters)
		if again := s.Schedule(snap); !reflect.DeepEqual(res, again) {
			t.Fatalf("case %d: the snapshot gives another result:\n%s\n%s", i, resultJSON(res), resultJSON(again))
		}
		got[i] = resultJSON(res)
	}
	if *update {
		writeResults(t, got)
		return
	}
	want := readResults(t)
	if len(want) != len(got) {
		t.Fatalf("%s has %d cases, want %d (rerun with -update if the case count changed on purpose)", resultsFile, len(want), len(got))
	}
	bad := 0
	for i := range got {
		if got[i] == want[i] {
			continue
		}
		bad++
		if bad <= 5 {
			diff := cmp.Diff(decodeJSON(t, want[i]), decodeJSON(t, got[i]))
			if diff == "" {
				diff = "only the encoding differs:\nwant " + want[i] + "\ngot  " + got[i]
			}
			t.Errorf("case %d: result changed (-want +got):\n%s", i, diff)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d results changed (if intended, rerun with -update and review the diff of %s)", bad, len(got), resultsFile)
	}
}

func writeResults(t *testing.T, results []string) {
	t.Helper()
	var b strings.Builder
	for i, r := range results {
		line, err := json.Marshal(recordedResult{Case: i, Result: json.RawMessage(r)})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(resultsFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readResults returns the recorded Result JSON of every case, by case
// number.
func readResults(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(resultsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r recordedResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s line %d: %v", resultsFile, len(out)+1, err)
		}
		if r.Case != len(out) {
			t.Fatalf("%s line %d holds case %d, want case %d", resultsFile, len(out)+1, r.Case, len(out))
		}
		out = append(out, string(r.Result))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// decodeJSON decodes a Result's JSON generically, so that cmp.Diff names
// the fields that differ.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func resultJSON(r Result) string {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// gen draws from a PCG with its own arithmetic, so that the cases do not
// depend on how math/rand maps numbers to ranges.
type gen struct{ r *rand.PCG }

func (g gen) n(k int) int    { return int(g.r.Uint64() % uint64(k)) }
func (g gen) one(k int) bool { return g.n(k) == 0 }
func (g gen) pick(ss ...string) string {
	return ss[g.n(len(ss))]
}

func variedInput(i int) Input {
	g := gen{rand.NewPCG(uint64(i), 0x5eed)}
	// Mostly small problems; some large enough for the > 12 party lines
	// and the heap.
	n := g.n(12)
	switch g.n(8) {
	case 0:
		n = 13 + g.n(40)
	case 1:
		n = 0
	}
	cs := make([]framework.ClusterInfo, n)
	for ci := range cs {
		cs[ci] = variedCluster(g, ci)
	}
	if !g.one(3) { // unsorted input
		for a := len(cs) - 1; a > 0; a-- {
			b := g.n(a + 1)
			cs[a], cs[b] = cs[b], cs[a]
		}
	}
	names := func() []string {
		var out []string
		for range 1 + g.n(3) {
			out = append(out, fmt.Sprintf("c%02d", g.n(max(n, 1)+2)))
		}
		return out
	}

	pl := policy.Placement{}
	switch g.n(6) {
	case 0, 1:
		pl.ClusterAffinity = variedAffinity(g, names)
	case 2:
		for ti := range 1 + g.n(3) {
			term := policy.ClusterAffinityTerm{AffinityName: fmt.Sprintf("term-%d", ti), ClusterAffinity: *variedAffinity(g, names)}
			for range g.n(3) {
				term.OverflowAffinities = append(term.OverflowAffinities, *variedAffinity(g, names))
			}
			pl.ClusterAffinities = append(pl.ClusterAffinities, term)
		}
	}
	if g.one(3) {
		pl.ClusterTolerations = append(pl.ClusterTolerations, corev1.Toleration{Key: g.pick("dedicated", "maintenance", ""), Operator: corev1.TolerationOperator(g.pick("Exists", "Equal", "")), Value: g.pick("x", "y", ""), Effect: corev1.TaintEffect(g.pick("NoSchedule", "NoExecute", ""))})
	}
	switch g.n(12) {
	case 0:
		pl.SpreadConstraints = []policy.SpreadConstraint{{SpreadByField: "cluster", MinGroups: g.n(3), MaxGroups: 1 + g.n(5)}}
	case 1:
		pl.SpreadConstraints = []policy.SpreadConstraint{{SpreadByField: "region", MinGroups: g.n(3), MaxGroups: 1 + g.n(3)}}
	case 2:
		pl.SpreadConstraints = []policy.SpreadConstraint{
			{SpreadByField: "region", MinGroups: 1, MaxGroups: 1 + g.n(3)},
			{SpreadByField: "cluster", MinGroups: 1 + g.n(2), MaxGroups: 1 + g.n(6)},
		}
	case 3:
		if g.one(2) {
			pl.SpreadConstraints = []policy.SpreadConstraint{{SpreadByField: g.pick("zone", "provider"), MinGroups: 1, MaxGroups: 2}}
		} else {
			pl.SpreadConstraints = []policy.SpreadConstraint{{SpreadByLabel: "tier", MinGroups: 1, MaxGroups: 2}}
		}
	}
	rule := func() policy.StaticClusterWeight {
		a := variedAffinity(g, names)
		a.PreferredDuringSchedulingIgnoredDuringExecution = nil
		return policy.StaticClusterWeight{TargetCluster: *a, Weight: int64(g.n(5))}
	}
	switch g.n(9) {
	case 0:
	case 1:
		pl.ReplicaScheduling = duplicated()
	case 2:
		rs := staticWeighted()
		for range g.n(4) {
			rs.WeightPreference.StaticWeightList = append(rs.WeightPreference.StaticWeightList, rule())
		}
		pl.ReplicaScheduling = rs
	case 3:
		rs := staticWeighted()
		rs.WeightPreference.StaticWeightList = nil
		rs.WeightPreference.StaticClusterWeight = []policy.StaticClusterWeight{rule(), rule()}
		if g.one(2) {
			rs.WeightPreference = nil
		}
		pl.ReplicaScheduling = rs
	case 4, 5:
		pl.ReplicaScheduling = dynamicWeighted()
	case 6:
		pl.ReplicaScheduling = aggregated()
	case 7:
		pl.ReplicaScheduling = &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: policy.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policy.DivisionPreferenceCostOptimized}
		if g.one(2) {
			cpu, mem := float64(g.n(3)), 0.5
			pl.ReplicaScheduling.CostWeights = &policy.CostWeights{CPU: &cpu, Memory: &mem}
		}
	case 8:
		pl.ReplicaScheduling = &policy.ReplicaSchedulingStrategy{ReplicaSchedulingType: policy.ReplicaSchedulingTypeDivided}
	}

	b := events.Binding{
		Key:        events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "app"},
		APIVersion: "apps/v1",
		Replicas:   int32(g.n(40)),
		UID:        fmt.Sprintf("uid-%d", g.n(1000)),
		Spec:       &policy.PropagationSpec{Placement: pl},
	}
	switch g.n(6) {
	case 0:
		b.Key, b.APIVersion, b.Replicas = events.ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "cm"}, "v1", 0
	case 1:
		b.Spec = nil
	case 2:
		b.UID = ""
	}
	switch g.n(4) {
	case 0:
		b.ReplicaRequirements = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(g.pick("100m", "250m", "1", "3")), corev1.ResourceMemory: resource.MustParse(g.pick("128Mi", "1Gi", "5Gi"))}
	case 1:
		b.ReplicaRequirements = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), "nvidia.com/gpu": resource.MustParse(g.pick("1", "2"))}
	}
	in := Input{Binding: b, Clusters: cs}
	for _, c := range cs {
		if g.one(4) {
			in.Previous = append(in.Previous, events.TargetCluster{Name: c.Name, Replicas: int32(g.n(12))})
		}
	}
	if g.one(10) {
		in.Previous = append(in.Previous, events.TargetCluster{Name: "gone", Replicas: 2})
	}
	if g.one(6) && n > 0 {
		in.Evicted = []string{cs[g.n(n)].Name}
	}
	in.Fresh = g.one(5)
	if len(pl.ClusterAffinities) > 0 && g.one(2) {
		in.ObservedAffinity = pl.ClusterAffinities[g.n(len(pl.ClusterAffinities))].AffinityName
	}
	return in
}

func variedCluster(g gen, i int) framework.ClusterInfo {
	c := framework.ClusterInfo{Name: fmt.Sprintf("c%02d", i), Ready: !g.one(6)}
	if !g.one(8) {
		c.Labels = map[string]string{"env": g.pick("prod", "dev"), "tier": strconv.Itoa(g.n(3))}
		if g.one(3) {
			c.Labels["cost-tier"] = g.pick("low", "high")
		}
	}
	if !g.one(4) {
		c.Spec.Region = fmt.Sprintf("r%d", g.n(4))
	}
	if g.one(2) {
		c.Spec.Provider = g.pick("aws", "gcp")
	}
	switch g.n(4) {
	case 0:
		c.Spec.Zones = []string{fmt.Sprintf("z%d", g.n(3))}
	case 1:
		c.Spec.Zone = "z9"
	}
	if g.one(6) {
		c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: g.pick("dedicated", "maintenance", "cluster.karmada.io/not-ready"), Value: g.pick("", "x"), Effect: corev1.TaintEffect(g.pick("NoSchedule", "NoExecute", "PreferNoSchedule"))})
	}
	switch g.n(10) {
	case 0:
		c.APIEnablements = []policy.APIEnablement{{GroupVersion: "v1", Resources: []policy.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}}}
		c.CompleteAPIs = g.one(2)
	case 1, 2:
		c.APIEnablements = []policy.APIEnablement{{GroupVersion: "apps/v1", Resources: []policy.APIResource{{Name: "deployments", Kind: "Deployment"}}}, {GroupVersion: "v1", Resources: []policy.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}}}
		c.CompleteAPIs = true
	}
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	switch g.n(6) {
	case 0: // no figures
	case 1:
		c.Allocatable = corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(int64(g.n(40)), resource.DecimalSI)}
	default:
		c.Allocatable = corev1.ResourceList{
			corev1.ResourcePods:   *resource.NewQuantity(int64(g.n(60)), resource.DecimalSI),
			corev1.ResourceCPU:    q(strconv.Itoa(1 + g.n(16))),
			corev1.ResourceMemory: q(strconv.Itoa(1+g.n(64)) + "Gi"),
		}
		if g.one(3) {
			c.Allocatable["nvidia.com/gpu"] = q(strconv.Itoa(g.n(8)))
		}
		if g.one(2) {
			c.Allocated = corev1.ResourceList{corev1.ResourcePods: q(strconv.Itoa(g.n(20))), corev1.ResourceCPU: q(strconv.Itoa(g.n(4)))}
		}
		if g.one(4) {
			c.Allocating = corev1.ResourceList{corev1.ResourceMemory: q(strconv.Itoa(g.n(8)) + "Gi"), "nvidia.com/gpu": q("1")}
		}
		if g.one(10) {
			c.Allocatable[corev1.ResourcePods] = *resource.NewQuantity(1<<40, resource.DecimalSI)
		}
	}
	switch g.n(4) {
	case 0:
		c.Annotations = map[string]string{framework.AnnotationCPUPrice: g.pick("0.02", "0.05", "0.1"), framework.AnnotationMemoryPrice: g.pick("0.001", "0.004")}
	case 1:
		c.Annotations = map[string]string{framework.AnnotationCPUPrice: g.pick("cheap", "-1", "0.03")}
	}
	return c
}

func variedAffinity(g gen, names func() []string) *policy.ClusterAffinity {
	a := &policy.ClusterAffinity{}
	switch g.n(7) {
	case 0:
		a.ClusterNames = names()
	case 1:
		a.ExcludeClusters = names()
	case 2:
		a.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": g.pick("prod", "dev")}}
	case 3:
		a.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOperator(g.pick("In", "NotIn")), Values: []string{"0", strconv.Itoa(g.n(3))}}}}
	case 4:
		a.FieldSelector = &policy.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: g.pick("region", "provider", "zone"), Operator: corev1.NodeSelectorOperator(g.pick("In", "NotIn")), Values: []string{"r0", "r1", "aws", "z0"}}}}
	case 5:
		a.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
	}
	if g.one(4) {
		a.PreferredDuringSchedulingIgnoredDuringExecution = []policy.PreferredClusterTerm{{
			Weight:     int32(1 + g.n(100)),
			Preference: policy.ClusterSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "cost-tier", Operator: corev1.NodeSelectorOperator(g.pick("In", "Exists", "Gt")), Values: []string{"low"}}}},
		}}
		if a.PreferredDuringSchedulingIgnoredDuringExecution[0].Preference.MatchExpressions[0].Operator == corev1.NodeSelectorOpExists {
			a.PreferredDuringSchedulingIgnoredDuringExecution[0].Preference.MatchExpressions[0].Values = nil
		}
	}
	return a
}

// A snapshot shared by many decisions (as schedulerd shares one between
// cluster changes, concurrently in simulate) gives every decision the
// result it gets alone from the same clusters: what a snapshot remembers
// from one decision (Bind's matches) must not leak into another.
func TestSharedSnapshotMatchesClusters(t *testing.T) {
	s := newDefault()
	for k := range 40 {
		cs := variedInput(k).Clusters
		snap := framework.NewSnapshot(cs)
		inputs := make([]Input, 150)
		want := make([]Result, len(inputs))
		for j := range inputs {
			in := variedInput(1000 + j)
			in.Clusters = cs
			inputs[j] = in
			want[j] = s.Schedule(in)
		}
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Go(func() {
				for j := w; j < len(inputs); j += 3 {
					in := inputs[j]
					in.Clusters, in.Snapshot = nil, snap
					if got := s.Schedule(in); !reflect.DeepEqual(got, want[j]) {
						t.Errorf("clusters %d, placement %d: shared snapshot gives\n%s\nwant\n%s", k, j, resultJSON(got), resultJSON(want[j]))
					}
				}
			})
		}
		wg.Wait()
	}
}
