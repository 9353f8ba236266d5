package core

import (
	"math"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// priced sets the cluster's price annotations.
func priced(cpu, memory string) clusterOpt {
	return func(c *framework.ClusterInfo) {
		c.Annotations = map[string]string{framework.AnnotationCPUPrice: cpu, framework.AnnotationMemoryPrice: memory}
	}
}

// pods gives the cluster room for n pods and plenty of cpu and memory.
func pods(n int64) clusterOpt {
	return func(c *framework.ClusterInfo) {
		c.Allocatable = corev1.ResourceList{
			corev1.ResourcePods:   *resource.NewQuantity(n, resource.DecimalSI),
			corev1.ResourceCPU:    resourceMust("1000"),
			corev1.ResourceMemory: resourceMust("10Ti"),
		}
	}
}

func costOptimized() *policy.ReplicaSchedulingStrategy {
	return &policy.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policy.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policy.DivisionPreferenceCostOptimized,
	}
}

func withRequests(in Input, kv ...string) Input {
	in.Binding.ReplicaRequirements = corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		in.Binding.ReplicaRequirements[corev1.ResourceName(kv[i])] = resourceMust(kv[i+1])
	}
	return in
}

func TestCostAwarePlacement(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	cheapCPU := cluster("cheap-cpu", priced("0.02", "0.010"), pods(100)) // 1 core + 4 GiB: 0.02 + 0.04 = 0.06
	dear := cluster("dear", priced("0.10", "0.020"), pods(100))          // 0.10 + 0.08 = 0.18
	unpriced := cluster("unpriced", pods(100))
	spreadOne := []policy.SpreadConstraint{{SpreadByField: "cluster", MinGroups: 1, MaxGroups: 1}}
	in := func(replicas int32, pl policy.Placement, cs ...framework.ClusterInfo) Input {
		return withRequests(Input{Binding: deployment("app", replicas, pl), Clusters: cs}, "cpu", "1", "memory", "4Gi")
	}
	runScheduleCases(t, []scheduleCase{
		{name: "a cheaper cluster wins with spread maxGroups 1",
			in:   in(2, policy.Placement{SpreadConstraints: spreadOne}, dear, cheapCPU, unpriced),
			want: "cheap-cpu:2"},
		{name: "CostOptimized fills the cheapest cluster first, then the next",
			in: in(7, policy.Placement{ReplicaScheduling: costOptimized()},
				cluster("a-dear", priced("0.10", "0.02"), pods(10)), cluster("b-cheap", priced("0.01", "0.01"), pods(5)), cluster("c-mid", priced("0.05", "0.01"), pods(10))),
			want: "b-cheap:5 c-mid:2", division: "CostOptimized: 7 replicas on the cheapest clusters first"},
		{name: "CostOptimized breaks equal prices by name",
			in:   in(3, policy.Placement{ReplicaScheduling: costOptimized()}, cluster("b", priced("1", "1"), pods(10)), cluster("a", priced("1", "1"), pods(10))),
			want: "a:3"},
		{name: "CostOptimized uses clusters without prices last",
			in:   in(6, policy.Placement{ReplicaScheduling: costOptimized()}, cluster("a-unpriced", pods(10)), cluster("z-priced", priced("9", "9"), pods(4))),
			want: "a-unpriced:2 z-priced:4"},
		{name: "CostOptimized counts the replicas a cluster already runs as capacity",
			in: func() Input {
				x := in(4, policy.Placement{ReplicaScheduling: costOptimized()}, cluster("cheap", priced("0.01", "0.01"), pods(1)), cluster("dear", priced("1", "1"), pods(10)))
				x.Previous = targetsOf("cheap:3")
				return x
			}(),
			want: "cheap:4"},
		{name: "CostOptimized is unschedulable when the clusters cannot take every replica",
			in:      in(30, policy.Placement{ReplicaScheduling: costOptimized()}, cluster("a", priced("1", "1"), pods(10)), cluster("b", pods(5))),
			wantErr: "Clusters available replicas 15 are not enough to schedule 30 replicas."},
	})

	t.Run("CostPerHour is replicas times the per-replica price, summed over priced clusters", func(t *testing.T) {
		// a: 0.5 cores × 0.04 + 2 GiB × 0.005 = 0.03 per replica; b: 0.5 × 0.1 + 2 × 0.01 = 0.07.
		x := in(5, policy.Placement{ReplicaScheduling: costOptimized()},
			cluster("a", priced("0.04", "0.005"), pods(3)), cluster("b", priced("0.1", "0.01"), pods(10)), cluster("c", pods(10)))
		x = withRequests(x, "cpu", "500m", "memory", "2Gi")
		for _, snapshot := range []bool{false, true} {
			if snapshot {
				x.Snapshot, x.Clusters = framework.NewSnapshot(x.Clusters), nil
			}
			got := newDefault().Schedule(x)
			if placed(got.Clusters) != "a:3 b:2" {
				t.Fatalf("want a:3 b:2, got %q (%s %s)", placed(got.Clusters), got.Error, got.Division)
			}
			if want := 3*0.03 + 2*0.07; math.Abs(got.CostPerHour-want) > 1e-9 {
				t.Errorf("want cost per hour %v, got %v", want, got.CostPerHour)
			}
			if !strings.Contains(got.Division, "cost per hour 0.23") {
				t.Errorf("division should state the cost, got %q", got.Division)
			}
		}
	})
	t.Run("a replica without requests is priced at one core and one GiB, weighted", func(t *testing.T) {
		pl := policy.Placement{ReplicaScheduling: duplicated()}
		pl.ReplicaScheduling.CostWeights = &policy.CostWeights{CPU: f(2), Memory: f(0.5)}
		got := newDefault().Schedule(Input{Binding: deployment("app", 3, pl), Clusters: []framework.ClusterInfo{cluster("a", priced("0.1", "0.02"))}})
		if want := 3 * (2*0.1 + 0.5*0.02); math.Abs(got.CostPerHour-want) > 1e-9 {
			t.Errorf("want %v, got %v (%s)", want, got.CostPerHour, got.Division)
		}
	})
	t.Run("without prices the cost is 0 and the division says nothing of it", func(t *testing.T) {
		got := newDefault().Schedule(in(2, policy.Placement{}, unpriced))
		if got.CostPerHour != 0 || strings.Contains(got.Division, "cost") {
			t.Errorf("want no cost, got %v %q", got.CostPerHour, got.Division)
		}
	})
}
