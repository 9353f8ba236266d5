package readmodel

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

func TestNonMembersNamesEveryClusterAPlacementGivesThatIsNoMember(t *testing.T) {
	spec := &policy.PropagationSpec{Placement: policy.Placement{
		ClusterAffinity:   &policy.ClusterAffinity{ClusterNames: []string{"cluster1", "cluster9"}, ExcludeClusters: []string{"clutser2"}},
		ClusterAffinities: []policy.ClusterAffinityTerm{{AffinityName: "a", ClusterAffinity: policy.ClusterAffinity{ClusterNames: []string{"cluster3", "gone"}}}},
		ReplicaScheduling: &policy.ReplicaSchedulingStrategy{WeightPreference: &policy.ClusterPreferences{
			StaticWeightList: []policy.StaticClusterWeight{{TargetCluster: policy.ClusterAffinity{ClusterNames: []string{"cluster7"}}, Weight: 1}}}},
	}}
	want := []NonMember{
		{"cluster9", "spec.placement.clusterAffinity.clusterNames[1]"},
		{"clutser2", "spec.placement.clusterAffinity.exclude[0]"},
		{"gone", "spec.placement.clusterAffinities[0].clusterNames[1]"},
		{"cluster7", "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].targetCluster.clusterNames[0]"},
	}
	if diff := cmp.Diff(want, NonMembers(spec, []string{"cluster1", "cluster2", "cluster3"})); diff != "" {
		t.Errorf("non-members (-want +got):\n%s", diff)
	}
	if got := want[0].String(); got != "spec.placement.clusterAffinity.clusterNames[1]: cluster9 is not a member: nothing will be placed there" {
		t.Errorf("message %q", got)
	}
}

func TestChangedSinceSaysWhatHappenedAfterADecision(t *testing.T) {
	decided := t0.Add(time.Hour)
	clusters := []Cluster{
		{Registration: events.ClusterRegistration{Name: "before"}, JoinedAt: t0, Health: &events.ClusterHealth{State: events.ClusterStateReady, Since: t0}},
		{Registration: events.ClusterRegistration{Name: "lost"}, JoinedAt: t0, Health: &events.ClusterHealth{State: events.ClusterStateUnreachable, Since: decided.Add(time.Minute)}},
		{Registration: events.ClusterRegistration{Name: "new"}, JoinedAt: decided.Add(2 * time.Minute)},
	}
	want := []string{
		"lost became Unreachable at " + decided.Add(time.Minute).UTC().Format(time.RFC3339) + ", after this decision",
		"new joined at " + decided.Add(2*time.Minute).UTC().Format(time.RFC3339) + ", after this decision",
	}
	if diff := cmp.Diff(want, ChangedSince(events.PlacementDecision{DecidedAt: decided}, clusters)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}
