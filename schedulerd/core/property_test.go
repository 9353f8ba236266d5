package core

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// randomInput builds a random but valid scheduling problem.
func randomInput(r *rand.Rand) Input {
	n := 1 + r.IntN(15)
	cs := make([]framework.ClusterInfo, n)
	for i := range cs {
		opts := []clusterOpt{
			labels("env", []string{"prod", "dev"}[r.IntN(2)], "tier", fmt.Sprint(r.IntN(3))),
			free(int64(r.IntN(40))),
		}
		if r.IntN(3) > 0 {
			opts = append(opts, region(fmt.Sprintf("r%d", r.IntN(3))))
		}
		if r.IntN(5) == 0 {
			opts = append(opts, taint("dedicated", "x", corev1.TaintEffectNoSchedule))
		}
		cs[i] = cluster(fmt.Sprintf("c%02d", i), opts...)
	}
	pl := policy.Placement{}
	if r.IntN(2) == 0 {
		pl.ClusterAffinity = &policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	}
	switch r.IntN(4) {
	case 0:
		pl.ReplicaScheduling = duplicated()
	case 1:
		pl.ReplicaScheduling = staticWeighted(
			policy.StaticClusterWeight{TargetCluster: policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "0"}}}, Weight: int64(1 + r.IntN(5))},
			policy.StaticClusterWeight{TargetCluster: policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "1"}}}, Weight: int64(1 + r.IntN(5))},
		)
	case 2:
		pl.ReplicaScheduling = dynamicWeighted()
	case 3:
		pl.ReplicaScheduling = aggregated()
	}
	switch r.IntN(4) {
	case 0:
		pl.SpreadConstraints = []policy.SpreadConstraint{{SpreadByField: "cluster", MinGroups: 1, MaxGroups: 1 + r.IntN(4)}}
	case 1:
		pl.SpreadConstraints = []policy.SpreadConstraint{{SpreadByField: "region", MinGroups: 1, MaxGroups: 1 + r.IntN(2)}}
	}
	in := Input{Binding: deployment("app", int32(r.IntN(30)), pl), Clusters: cs}
	in.Binding.UID = fmt.Sprintf("uid-%d", r.IntN(1000))
	for _, c := range cs {
		if r.IntN(4) == 0 {
			in.Previous = append(in.Previous, events.TargetCluster{Name: c.Name, Replicas: int32(r.IntN(10))})
		}
	}
	if r.IntN(6) == 0 && n > 1 {
		in.Evicted = []string{cs[r.IntN(n)].Name}
	}
	in.Fresh = r.IntN(5) == 0
	return in
}

func TestScheduleProperties(t *testing.T) {
	s := newDefault()
	r := rand.New(rand.NewPCG(1, 2))
	scheduled := 0
	for i := range 3000 {
		in := randomInput(r)
		got := s.Schedule(in)
		if got.Scheduled {
			scheduled++
		} else if got.Error == "" {
			t.Fatalf("case %d: unscheduled without an error", i)
		}
		var sum int64
		for _, tc := range got.Clusters {
			sum += int64(tc.Replicas)
			if _, filtered := got.Diagnosis[tc.Name]; filtered {
				t.Fatalf("case %d: replicas landed on filtered cluster %s (%v)", i, tc.Name, got.Diagnosis[tc.Name])
			}
		}
		if got.Scheduled && got.Strategy != string(policy.StrategyDuplicated) && sum != int64(in.Binding.Replicas) {
			t.Fatalf("case %d: %s divided %d replicas into %d: %s", i, got.Strategy, in.Binding.Replicas, sum, got.Division)
		}
		shuffled := in
		shuffled.Clusters = append([]framework.ClusterInfo(nil), in.Clusters...)
		r.Shuffle(len(shuffled.Clusters), func(a, b int) {
			shuffled.Clusters[a], shuffled.Clusters[b] = shuffled.Clusters[b], shuffled.Clusters[a]
		})
		if again := s.Schedule(shuffled); !reflect.DeepEqual(got, again) {
			t.Fatalf("case %d: same input, different result after shuffling clusters:\n%+v\n%+v", i, got, again)
		}
	}
	if scheduled < 500 {
		t.Errorf("only %d of 3000 random cases scheduled; the generator is too harsh to test much", scheduled)
	}
}

func randomInputs(n int) []Input {
	r := rand.New(rand.NewPCG(3, 4))
	out := make([]Input, n)
	for i := range out {
		out[i] = randomInput(r)
	}
	return out
}
