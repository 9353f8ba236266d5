package core

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type scheduleCase struct {
	name     string
	in       Input
	want     string // placement as "a:1 b:2"; ignored when wantErr is set
	wantErr  string // substring of Result.Error
	division string // substring of Result.Division, if set
}

func runScheduleCases(t *testing.T, tests []scheduleCase) {
	t.Helper()
	s := newDefault()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Schedule(tt.in)
			if tt.wantErr != "" {
				if got.Scheduled || !strings.Contains(got.Error, tt.wantErr) {
					t.Fatalf("want error containing %q, got scheduled=%v error=%q placement %q", tt.wantErr, got.Scheduled, got.Error, placed(got.Clusters))
				}
				return
			}
			if !got.Scheduled {
				t.Fatalf("not scheduled: %s (diagnosis %v)", got.Error, got.Diagnosis)
			}
			if p := placed(got.Clusters); p != tt.want {
				t.Errorf("want placement %q, got %q (division: %s)", tt.want, p, got.Division)
			}
			if tt.division != "" && !strings.Contains(got.Division, tt.division) {
				t.Errorf("want division containing %q, got %q", tt.division, got.Division)
			}
		})
	}
}

func TestSeedExamples(t *testing.T) {
	seed000 := func(replicas int32) Input {
		pl := policy.Placement{
			ClusterAffinity: names("cluster1", "cluster2", "cluster3"),
			ReplicaScheduling: &policy.ReplicaSchedulingStrategy{
				ReplicaSchedulingType:     policy.ReplicaSchedulingTypeDivided,
				ReplicaDivisionPreference: policy.DivisionPreferenceWeighted,
				WeightPreference: &policy.ClusterPreferences{StaticClusterWeight: []policy.StaticClusterWeight{
					weight("cluster1", 3), weight("cluster2", 2), weight("cluster3", 1),
				}},
			},
		}
		return Input{Binding: deployment("my-app", replicas, pl), Clusters: clusters("cluster1", "cluster2", "cluster3", "cluster4")}
	}
	awsAzure := []framework.ClusterInfo{
		cluster("aws-prod", provider("aws"), labels("provider", "aws")),
		cluster("azure-staging", provider("azure")),
		cluster("gcp-dev", provider("gcp")),
	}
	weighted := func(name string, replicas int32, a, b int64) Input {
		pl := policy.Placement{
			ClusterAffinity:   names("aws-prod", "azure-staging"),
			ReplicaScheduling: staticWeighted(weight("aws-prod", a), weight("azure-staging", b)),
		}
		return Input{Binding: deployment(name, replicas, pl), Clusters: awsAzure}
	}
	regions := []framework.ClusterInfo{
		cluster("us-1", region("us-east-1"), free(10)),
		cluster("us-2", region("us-east-1"), free(10)),
		cluster("eu-1", region("eu-west-1"), free(10)),
		cluster("ap-1", region("ap-south-1"), free(10)),
	}
	regionSensitive := policy.Placement{SpreadConstraints: []policy.SpreadConstraint{{SpreadByField: "region", MaxGroups: 1}}}
	costTiers := []framework.ClusterInfo{
		cluster("aws-prod", labels("cost-tier", "high", "region", "us-east-1"), region("us-east-1"), free(100)),
		cluster("aws-spot", labels("cost-tier", "low", "region", "us-east-1"), region("us-east-1"), free(5)),
		cluster("azure-prod", labels("cost-tier", "high"), free(50)),
	}
	costOptimised := policy.Placement{
		SpreadConstraints: []policy.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 1, MinGroups: 1}},
		ClusterAffinity: &policy.ClusterAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []policy.PreferredClusterTerm{{
			Weight: 100,
			Preference: policy.ClusterSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "cost-tier", Operator: corev1.NodeSelectorOpIn, Values: []string{"low"}},
			}},
		}}},
	}
	runScheduleCases(t, []scheduleCase{
		{name: "seed 000 my-app splits 6 replicas 3:2:1 via staticClusterWeight into 3/2/1", in: seed000(6),
			want: "cluster1:3 cluster2:2 cluster3:1", division: "Webster 6 by weights cluster1=3 cluster2=2 cluster3=1 -> 3/2/1"},
		{name: "seed 000 my-app splits 12 replicas 3:2:1 into 6/4/2", in: seed000(12), want: "cluster1:6 cluster2:4 cluster3:2"},
		{name: "seed 002 nginx-web splits 10 replicas 60:40 into aws-prod 6 and azure-staging 4", in: weighted("nginx-web", 10, 60, 40),
			want: "aws-prod:6 azure-staging:4"},
		{name: "seed 004 frontend canary splits 10 replicas 80:20 into 8/2", in: weighted("frontend", 10, 80, 20),
			want: "aws-prod:8 azure-staging:2"},
		{name: "seed 004 region spread keeps a duplicated workload in one region, the one with most clusters that fit",
			in: Input{Binding: deployment("api", 3, regionSensitive), Clusters: regions}, want: "us-1:3 us-2:3"},
		{name: "seed 004 spread of one cluster with the preferred cost-tier low picks the low-cost cluster",
			in:   Input{Binding: deployment("batch", 2, costOptimised), Clusters: costTiers},
			want: "aws-spot:2"},
	})
}

func TestStaticWeights(t *testing.T) {
	three := clusters("m1", "m2", "m3")
	in := func(replicas int32, rs *policy.ReplicaSchedulingStrategy) Input {
		return Input{Binding: deployment("app", replicas, policy.Placement{ReplicaScheduling: rs}), Clusters: three}
	}
	w321 := staticWeighted(weight("m1", 3), weight("m2", 2), weight("m3", 1))
	both := policy.StaticClusterWeight{TargetCluster: policy.ClusterAffinity{ClusterNames: []string{"m1", "m2"}}, Weight: 1}
	runScheduleCases(t, []scheduleCase{
		{name: "static weights 3:2:1 split 6 replicas 3/2/1", in: in(6, w321), want: "m1:3 m2:2 m3:1"},
		{name: "static weights 3:2:1 split 12 replicas 6/4/2", in: in(12, w321), want: "m1:6 m2:4 m3:2"},
		{name: "static weights 3:2:1 split 13 replicas 7/4/2", in: in(13, w321), want: "m1:7 m2:4 m3:2"},
		{name: "static weights 3:2:1 split 14 replicas 7/5/2", in: in(14, w321), want: "m1:7 m2:5 m3:2"},
		{name: "a cluster matched by rules of weight 1 and 2 weighs 2, so 3 replicas split 2:1",
			in: in(3, staticWeighted(both, weight("m1", 2))), want: "m1:2 m2:1"},
		{name: "with only one cluster weighted, the others get nothing", in: in(2, staticWeighted(weight("m1", 1))), want: "m1:2"},
		{name: "rules that match no candidate give every candidate weight 1", in: in(3, staticWeighted(weight("elsewhere", 5))),
			want: "m1:1 m2:1 m3:1", division: "equal weights"},
		{name: "no weightPreference gives equal weights", in: in(4, &policy.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policy.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policy.DivisionPreferenceWeighted,
		}), want: "m1:2 m2:1 m3:1"},
		{name: "weights 2:1 over 2 replicas give 1:1, not 2:0", in: in(2, staticWeighted(weight("m1", 2), weight("m2", 1))), want: "m1:1 m2:1"},
		{name: "static weights ignore capacity and the previous result", in: Input{
			Binding:  deployment("app", 6, policy.Placement{ReplicaScheduling: w321}),
			Clusters: three, Previous: targetsOf("m3:6"),
		}, want: "m1:3 m2:2 m3:1"},
	})
}

func TestDynamicStrategies(t *testing.T) {
	withFree := func(m1, m2, m3 int64) []framework.ClusterInfo {
		return []framework.ClusterInfo{cluster("m1", free(m1)), cluster("m2", free(m2)), cluster("m3", free(m3))}
	}
	in := func(rs *policy.ReplicaSchedulingStrategy, replicas int32, cs []framework.ClusterInfo, previous string) Input {
		return Input{Binding: deployment("app", replicas, policy.Placement{ReplicaScheduling: rs}), Clusters: cs, Previous: targetsOf(previous)}
	}
	onlyM1M2 := func(rs *policy.ReplicaSchedulingStrategy) Input {
		x := in(rs, 12, []framework.ClusterInfo{cluster("m1", free(3)), cluster("m2", free(3)), cluster("m3", free(100))}, "m1:6 m3:6")
		x.Binding.Spec.Placement.ClusterAffinity = names("m1", "m2")
		return x
	}
	fresh := in(dynamicWeighted(), 12, withFree(2, 2, 8), "m1:2 m2:4 m3:6")
	fresh.Fresh = true
	runScheduleCases(t, []scheduleCase{
		{name: "dynamic weight scale-up from 2/4/6 to 24 adds 12 split 4:4:4 by equal free capacity",
			in: in(dynamicWeighted(), 24, withFree(10, 10, 10), "m1:2 m2:4 m3:6"), want: "m1:6 m2:8 m3:10"},
		{name: "dynamic weight scale-up fails when free capacity is short of the missing replicas",
			in: in(dynamicWeighted(), 24, withFree(1, 1, 1), "m1:2 m2:4 m3:6"), wantErr: "Clusters available replicas 3 are not enough to schedule."},
		{name: "dynamic weight scale-down from 2/4/6 to 6 divides by the current distribution into 1/2/3",
			in: in(dynamicWeighted(), 6, withFree(0, 0, 0), "m1:2 m2:4 m3:6"), want: "m1:1 m2:2 m3:3"},
		{name: "dynamic weight with replicas already matching leaves the placement alone",
			in: in(dynamicWeighted(), 12, withFree(0, 0, 0), "m1:2 m2:4 m3:6"), want: "m1:2 m2:4 m3:6"},
		{name: "dynamic weight forgets a cluster that is no longer a candidate and re-places its replicas",
			in: onlyM1M2(dynamicWeighted()), want: "m1:9 m2:3"},
		{name: "dynamic weight first schedule with no capacity figures fails with 0 available",
			in: in(dynamicWeighted(), 3, clusters("m1", "m2"), ""), wantErr: "Clusters available replicas 0 are not enough to schedule."},
		{name: "fresh reschedule divides the total by free plus current capacity",
			in: fresh, want: "m1:2 m2:3 m3:7"},
		{name: "aggregated scale-down from m1:4 m2:8 to 6 keeps only the bigger cluster",
			in: in(aggregated(), 6, withFree(0, 0, 0), "m1:4 m2:8"), want: "m2:6"},
		{name: "aggregated scale-up to 24 uses every cluster when the used ones are not enough",
			in: in(aggregated(), 24, withFree(4, 6, 8), "m1:4 m2:8"), want: "m1:7 m2:12 m3:5"},
		{name: "aggregated scale-up prefers the clusters already used when they have room",
			in: in(aggregated(), 24, withFree(6, 6, 20), "m1:4 m2:8"), want: "m1:10 m2:14"},
		{name: "aggregated first schedule takes the shortest prefix of largest capacities and splits 10:8",
			in: in(aggregated(), 12, withFree(6, 8, 10), ""), want: "m2:5 m3:7"},
		{name: "aggregated first schedule puts everything on one cluster that fits it all",
			in: in(aggregated(), 12, withFree(12, 8, 10), ""), want: "m1:12"},
	})
}

func TestCapacityEstimate(t *testing.T) {
	q := func(s string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for _, kv := range strings.Fields(s) {
			k, v, _ := strings.Cut(kv, "=")
			out[corev1.ResourceName(k)] = resourceMust(v)
		}
		return out
	}
	b := &events.Binding{Replicas: 10, ReplicaRequirements: q("cpu=500m memory=1Gi nvidia.com/gpu=1")}
	e := newEstimator(b, true)
	tests := []struct {
		name                         string
		alloc, allocated, allocating string
		want                         int64
	}{
		{"gpus are the bottleneck", "pods=110 cpu=8 memory=32Gi nvidia.com/gpu=4", "pods=10 cpu=1 memory=2Gi nvidia.com/gpu=1", "nvidia.com/gpu=1", 2},
		{"cpu is the bottleneck, allocating counts as used", "pods=110 cpu=4 memory=32Gi nvidia.com/gpu=8", "cpu=1", "cpu=500m", 5},
		{"free pods cap the answer", "pods=12 cpu=64 memory=256Gi nvidia.com/gpu=64", "pods=9", "", 3},
		{"a requested resource the cluster does not have gives 0", "pods=110 cpu=64 memory=256Gi", "", "", 0},
		{"a summary without pods gives 0, as Karmada", "cpu=64 memory=256Gi nvidia.com/gpu=64", "", "", 0},
		{"no figures at all gives 0", "", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var alloc corev1.ResourceList
			if tt.alloc != "" {
				alloc = q(tt.alloc)
			}
			c := framework.ClusterInfo{Allocatable: alloc, Allocated: q(tt.allocated), Allocating: q(tt.allocating)}
			if got := e.freeOf(&c); got != tt.want {
				t.Errorf("want %d, got %d", tt.want, got)
			}
		})
	}
	t.Run("a workload without requests is bounded by free pods only", func(t *testing.T) {
		e := newEstimator(&events.Binding{Replicas: 3}, true)
		if got := e.freeOf(&framework.ClusterInfo{Allocatable: q("pods=20"), Allocated: q("pods=5")}); got != 15 {
			t.Errorf("want 15, got %d", got)
		}
	})
}

func TestFilteringAndDiagnosis(t *testing.T) {
	s := newDefault()
	cs := []framework.ClusterInfo{
		cluster("a", labels("env", "prod")),
		cluster("b", labels("env", "dev")),
		cluster("c", labels("env", "prod"), taint("maintenance", "true", corev1.TaintEffectNoSchedule)),
		cluster("d", labels("env", "prod"), taint("soft", "", corev1.TaintEffectPreferNoSchedule)),
		cluster("e", labels("env", "prod")),
	}
	pl := policy.Placement{ClusterAffinity: &policy.ClusterAffinity{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
	}}
	t.Run("filtered clusters carry plugin-prefixed reasons and get nothing", func(t *testing.T) {
		got := s.Schedule(Input{Binding: deployment("app", 2, pl), Clusters: cs, Evicted: []string{"e"}})
		if !got.Scheduled {
			t.Fatalf("not scheduled: %s", got.Error)
		}
		if p := placed(got.Clusters); p != "a:2 d:2" {
			t.Errorf("want a:2 d:2 (duplicated), got %s", p)
		}
		want := map[string]string{
			"b": "ClusterAffinity: cluster(s) did not match the placement cluster affinity constraint",
			"c": "TaintToleration: cluster(s) had untolerated taint {maintenance=true:NoSchedule}",
			"e": "ClusterEviction: cluster(s) is in the process of eviction",
		}
		for c, r := range want {
			if d := got.Diagnosis[c]; len(d) != 1 || d[0] != r {
				t.Errorf("cluster %s: want diagnosis [%s], got %v", c, r, d)
			}
		}
		if len(got.Diagnosis) != 3 || strings.Join(got.Feasible, ",") != "a,d" {
			t.Errorf("want feasible a,d and 3 diagnosed, got feasible %v diagnosis %v", got.Feasible, got.Diagnosis)
		}
	})
	t.Run("when nothing fits the error summarises every reason with its clusters", func(t *testing.T) {
		none := policy.Placement{ClusterAffinity: names("b")}
		none.ClusterAffinity.LabelSelector = pl.ClusterAffinity.LabelSelector
		got := s.Schedule(Input{Binding: deployment("app", 2, none), Clusters: cs})
		if got.Scheduled || !got.Unfit {
			t.Fatalf("want unschedulable (unfit), got %+v", got)
		}
		for _, part := range []string{"0/5 clusters are available", "did not match the placement cluster affinity constraint (5: a, b, c, d, e)", "untolerated taint {maintenance=true:NoSchedule} (1: c)"} {
			if !strings.Contains(got.Error, part) {
				t.Errorf("error %q lacks %q", got.Error, part)
			}
		}
		if d := got.Diagnosis["c"]; len(d) != 2 {
			t.Errorf("cluster c fails two filters, want both reasons, got %v", d)
		}
	})
	t.Run("a tolerated taint lets the cluster in and a cluster already placed passes its taint", func(t *testing.T) {
		tol := pl
		tol.ClusterTolerations = []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		got := s.Schedule(Input{Binding: deployment("app", 1, tol), Clusters: cs})
		if p := placed(got.Clusters); p != "a:1 c:1 d:1 e:1" {
			t.Errorf("with toleration want a c d e, got %s", p)
		}
		got = s.Schedule(Input{Binding: deployment("app", 1, pl), Clusters: cs, Previous: targetsOf("c:1")})
		if p := placed(got.Clusters); p != "a:1 c:1 d:1 e:1" {
			t.Errorf("with c already placed want a c d e, got %s", p)
		}
	})
}

func TestNonWorkloadsAndZeroReplicas(t *testing.T) {
	cm := events.Binding{Key: events.ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "cfg"}, APIVersion: "v1",
		Spec: &policy.PropagationSpec{Placement: policy.Placement{ClusterAffinity: names("m1", "m2"), ReplicaScheduling: staticWeighted(weight("m1", 1))}}}
	runScheduleCases(t, []scheduleCase{
		{name: "a non-workload goes to every selected cluster with 0 replicas, and the zeros are kept",
			in: Input{Binding: cm, Clusters: clusters("m1", "m2", "m3")}, want: "m1:0 m2:0"},
		{name: "weighted clusters that win no replica are dropped for workloads",
			in:   Input{Binding: deployment("app", 1, policy.Placement{ReplicaScheduling: staticWeighted(weight("m1", 2), weight("m2", 1))}), Clusters: clusters("m1", "m2")},
			want: "m1:1"},
	})
	t.Run("a divided workload with requests scaled to 0 gets an empty placement", func(t *testing.T) {
		b := deployment("app", 0, policy.Placement{ReplicaScheduling: staticWeighted(weight("m1", 1))})
		b.ReplicaRequirements = corev1.ResourceList{corev1.ResourceCPU: resourceMust("100m")}
		got := newDefault().Schedule(Input{Binding: b, Clusters: clusters("m1", "m2")})
		if !got.Scheduled || len(got.Clusters) != 0 {
			t.Errorf("want scheduled with no clusters, got scheduled=%v %q error %q", got.Scheduled, placed(got.Clusters), got.Error)
		}
	})
}

func TestClusterAffinitiesTerms(t *testing.T) {
	pl := policy.Placement{
		ClusterAffinities: []policy.ClusterAffinityTerm{
			{AffinityName: "primary", ClusterAffinity: policy.ClusterAffinity{ClusterNames: []string{"gone"}}},
			{AffinityName: "backup", ClusterAffinity: policy.ClusterAffinity{ClusterNames: []string{"m2"}}},
			{AffinityName: "last", ClusterAffinity: policy.ClusterAffinity{ClusterNames: []string{"m3"}}},
		},
	}
	s := newDefault()
	cs := clusters("m1", "m2", "m3")
	t.Run("the first term that schedules wins and is reported as the observed term", func(t *testing.T) {
		got := s.Schedule(Input{Binding: deployment("app", 1, pl), Clusters: cs})
		if placed(got.Clusters) != "m2:1" || got.AffinityName != "backup" {
			t.Errorf("want m2:1 with term backup, got %q term %q", placed(got.Clusters), got.AffinityName)
		}
	})
	t.Run("scheduling resumes at the observed term, not the first", func(t *testing.T) {
		got := s.Schedule(Input{Binding: deployment("app", 1, pl), Clusters: cs, ObservedAffinity: "last"})
		if placed(got.Clusters) != "m3:1" || got.AffinityName != "last" {
			t.Errorf("want m3:1 with term last, got %q term %q", placed(got.Clusters), got.AffinityName)
		}
	})
	t.Run("an explicit reschedule restarts from the first term", func(t *testing.T) {
		got := s.Schedule(Input{Binding: deployment("app", 1, pl), Clusters: cs, ObservedAffinity: "last", Fresh: true})
		if got.AffinityName != "backup" {
			t.Errorf("want term backup, got %q", got.AffinityName)
		}
	})
	t.Run("when every term fails the first failure is returned", func(t *testing.T) {
		got := s.Schedule(Input{Binding: deployment("app", 1, pl), Clusters: clusters("m1")})
		if got.Scheduled || got.AffinityName != "primary" || !got.Unfit {
			t.Errorf("want the primary term's no-fit failure, got %+v", got)
		}
	})
	t.Run("overflow tiers fill the primary tier's capacity first", func(t *testing.T) {
		over := policy.Placement{
			ReplicaScheduling: dynamicWeighted(),
			ClusterAffinities: []policy.ClusterAffinityTerm{{
				AffinityName:       "main",
				ClusterAffinity:    policy.ClusterAffinity{ClusterNames: []string{"m1"}},
				OverflowAffinities: []policy.ClusterAffinity{{ClusterNames: []string{"m2"}}},
			}},
		}
		got := s.Schedule(Input{Binding: deployment("app", 8, over), Clusters: []framework.ClusterInfo{cluster("m1", free(2)), cluster("m2", free(10))}, Previous: targetsOf("m1:3")})
		if p := placed(got.Clusters); p != "m1:5 m2:3" {
			t.Errorf("want m1:5 m2:3, got %q (%s %s)", p, got.Error, got.Division)
		}
	})
}

// The snapshot path and the plain path decide the same.
func TestSnapshotGivesTheSameResult(t *testing.T) {
	s := newDefault()
	for i, in := range randomInputs(500) {
		want := s.Schedule(in)
		snap := in
		snap.Snapshot, snap.Clusters = framework.NewSnapshot(in.Clusters), nil
		got := s.Schedule(snap)
		if placed(want.Clusters) != placed(got.Clusters) || want.Error != got.Error || want.Division != got.Division ||
			strings.Join(want.Feasible, ",") != strings.Join(got.Feasible, ",") || len(want.Diagnosis) != len(got.Diagnosis) {
			t.Fatalf("case %d: plain %+v\nsnapshot %+v", i, want, got)
		}
	}
}
