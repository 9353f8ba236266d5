package core

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

func cand(name string, score, avail int64) candidate {
	c := framework.ClusterInfo{Name: name}
	return candidate{c: &c, score: score, avail: avail, free: avail}
}

func candNames(cs []candidate) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.name())
	}
	return strings.Join(out, ",")
}

func TestSelectByCluster(t *testing.T) {
	ordered := []candidate{cand("m4", 60, 50), cand("m2", 40, 60), cand("m3", 30, 80), cand("m1", 20, 40)}
	tests := []struct {
		name    string
		sc      policy.SpreadConstraint
		need    int64
		want    string
		wantErr string
	}{
		{"max 2 needing 120 swaps the last pick for the roomier m3", policy.SpreadConstraint{MaxGroups: 2, MinGroups: 1}, 120, "m4,m3", ""},
		{"max 2 needing 200 cannot be satisfied", policy.SpreadConstraint{MaxGroups: 2, MinGroups: 1}, 200, "", "no enough resource when selecting 2 clusters"},
		{"without a capacity need the first maxGroups candidates win", policy.SpreadConstraint{MaxGroups: 2, MinGroups: 1}, 0, "m4,m2", ""},
		{"maxGroups unset selects zero clusters", policy.SpreadConstraint{MinGroups: 1}, 0, "", ""},
		{"fewer candidates than minGroups is an error", policy.SpreadConstraint{MaxGroups: 9, MinGroups: 5}, 0, "", "the number of feasible clusters is less than spreadConstraint.MinGroups"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := selectByCluster(ordered, tt.sc, tt.need)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("want error %q, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil || candNames(got) != tt.want {
				t.Errorf("want %q, got %q (err %v)", tt.want, candNames(got), err)
			}
		})
	}
}

func TestSelectGroups(t *testing.T) {
	g := func(name string, value, weight int64) group { return group{name: name, value: value, score: weight} }
	names := func(gs []*group) string {
		var out []string
		for _, x := range gs {
			out = append(out, x.name)
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name     string
		groups   []group
		min, max int
		target   int64
		want     string
	}{
		{"equal weight and value go to the path found first", []group{g("R1", 1, 60), g("R2", 2, 50), g("R3", 3, 40), g("R4", 4, 30)}, 1, 2, 5, "R1,R4"},
		{"on equal weight the larger value wins", []group{g("R4", 1, 60), g("R3", 3, 50), g("R1", 3, 40), g("R2", 4, 30)}, 1, 2, 5, "R3,R1"},
		{"a feasible strict prefix of the best path is preferred", []group{g("A", 5, 100), g("B", 1, 10)}, 1, 2, 1, "A"},
		{"with exactly minGroups groups only the full combination counts", []group{g("A", 1, 10), g("B", 1, 20)}, 2, 2, 2, "B,A"},
		{"no path reaches the target", []group{g("A", 1, 10), g("B", 1, 20)}, 1, 1, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(selectGroups(tt.groups, tt.min, tt.max, tt.target)); got != tt.want {
				t.Errorf("want %q, got %q", tt.want, got)
			}
		})
	}
}

func TestGroupScore(t *testing.T) {
	mk := func(scores, avails []int64) []candidate {
		var out []candidate
		for i := range scores {
			out = append(out, cand("c", scores[i], avails[i]))
		}
		return out
	}
	tests := []struct {
		name       string
		clusters   []candidate
		duplicated bool
		replicas   int64
		groupMin   int
		want       int64
	}{
		{"divided 100 over 2 groups reaching the 50 target with two clusters scores 50100",
			mk([]int64{100, 100, 0, 0, 0}, []int64{30, 30, 30, 10, 10}), false, 100, 2, 50100},
		{"divided 100 over 2 groups short of the target scores capacity and mean score 40100",
			mk([]int64{100, 100, 100, 100, 100}, []int64{10, 10, 10, 5, 5}), false, 100, 2, 40100},
		{"duplicated counts the clusters that fit every replica, then their mean score",
			mk([]int64{100, 0, 50}, []int64{5, 5, 1}), true, 3, 1, 2050},
		{"duplicated with no cluster that fits scores 0", mk([]int64{100}, []int64{1}), true, 3, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := groupScore(tt.clusters, tt.duplicated, tt.replicas, tt.groupMin, 1); got != tt.want {
				t.Errorf("want %d, got %d", tt.want, got)
			}
		})
	}
}

func TestSpreadThroughSchedule(t *testing.T) {
	cs := []framework.ClusterInfo{
		cluster("a1", region("r-a"), free(5)), cluster("a2", region("r-a"), free(5)),
		cluster("b1", region("r-b"), free(30)), cluster("nor", free(100)),
	}
	spread := func(rs *policy.ReplicaSchedulingStrategy, scs ...policy.SpreadConstraint) policy.Placement {
		return policy.Placement{ReplicaScheduling: rs, SpreadConstraints: scs}
	}
	runScheduleCases(t, []scheduleCase{
		{name: "a region spread filters clusters without a region and picks the region that can hold the replicas",
			in:   Input{Binding: deployment("app", 12, spread(dynamicWeighted(), policy.SpreadConstraint{SpreadByField: "region", MaxGroups: 1})), Clusters: cs},
			want: "b1:12"},
		{name: "a cluster spread of 2 for a divided workload picks the roomiest pair in candidate order",
			in:   Input{Binding: deployment("app", 40, spread(dynamicWeighted(), policy.SpreadConstraint{SpreadByField: "cluster", MaxGroups: 2, MinGroups: 1})), Clusters: cs},
			want: "b1:9 nor:31"},
		{name: "static weighting ignores spread constraints",
			in:   Input{Binding: deployment("app", 4, spread(staticWeighted(weight("a1", 1), weight("a2", 1), weight("b1", 1), weight("nor", 1)), policy.SpreadConstraint{SpreadByField: "cluster", MaxGroups: 1, MinGroups: 1})), Clusters: cs},
			want: "a1:1 a2:1 b1:1 nor:1"},
		{name: "a zone-only spread is not supported",
			in:      Input{Binding: deployment("app", 1, spread(nil, policy.SpreadConstraint{SpreadByField: "provider", MaxGroups: 1})), Clusters: []framework.ClusterInfo{cluster("p", provider("aws"))}},
			wantErr: "just support cluster and region spread constraint"},
		{name: "a cluster spread with maxGroups unset selects nothing",
			in:      Input{Binding: deployment("app", 1, spread(nil, policy.SpreadConstraint{SpreadByField: "cluster", MinGroups: 1})), Clusters: cs},
			wantErr: "no clusters available to schedule"},
		{name: "too few regions for the region minGroups is an error",
			in:      Input{Binding: deployment("app", 1, spread(nil, policy.SpreadConstraint{SpreadByField: "region", MinGroups: 3, MaxGroups: 3}, policy.SpreadConstraint{SpreadByField: "cluster", MinGroups: 1, MaxGroups: 5})), Clusters: cs},
			wantErr: "the number of feasible region is less than spreadConstraint.MinGroups"},
		{name: "two regions with a cluster constraint of 3 take the best of each then the roomiest rest",
			in:   Input{Binding: deployment("app", 3, spread(nil, policy.SpreadConstraint{SpreadByField: "region", MinGroups: 2, MaxGroups: 2}, policy.SpreadConstraint{SpreadByField: "cluster", MinGroups: 1, MaxGroups: 3})), Clusters: cs},
			want: "a1:3 a2:3 b1:3"},
	})
}
