package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/readmodel"
)

func TestExplain(t *testing.T) {
	p, err := readmodel.ExplainPlacement(recordedOn(t, events.AllPlacements), "deploy/my-app", "default")
	if err != nil {
		t.Fatal(err)
	}
	want := `Template:    deployment/my-app -n default
Policy:      propagationpolicy/my-app-policy -n default
Replicas:    6
Generation:  3 (binding revision 4), decided 2026-11-28 11:00:00Z
Strategy:    Divided/Weighted
Scheduled:   yes
Placement:   cluster1=4 cluster2=2
Division:    6 replicas by static weight 2:1
Clusters:
  CLUSTER    VERDICT    SCORE   REASON
  cluster1   feasible   100     
  cluster2   feasible   50      
  cluster3   filtered   -       TaintToleration: cluster3 has taint cluster.karmada.io/unreachable:NoSchedule
Evictions (failover; no candidates while listed; flotilla reschedule forgets all but a Gracefully kept copy within its grace period):
  CLUSTER    REASON             EVICTED                OLD COPY            WHY
  cluster3   TaintUntolerated   2026-11-28 11:00:00Z   kept (Gracefully)   cluster3 is unreachable
`
	got := printed(t, func(b *bytes.Buffer) error { readmodel.WriteExplanation(b, p, readmodel.Fleet{}); return nil })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("explain (-want +got):\n%s", diff)
	}
}

func TestExplainAnUnscheduledPlacementSaysWhy(t *testing.T) {
	p := events.PlacementDecision{Key: appKey, Generation: 1, Strategy: "Duplicated", Error: "0/3 clusters are available", DecidedAt: recordedAt,
		Diagnosis: map[string][]string{"cluster1": {"ClusterAffinity: not selected"}}, Warnings: []string{"spec.placement: empty"}}
	want := `Template:    deployment/my-app -n default
Generation:  1 (binding revision 0), decided 2026-11-28 09:00:00Z
Strategy:    Duplicated
Scheduled:   no: 0/3 clusters are available
Placement:   <none>
Clusters:
  CLUSTER    VERDICT    SCORE   REASON
  cluster1   filtered   -       ClusterAffinity: not selected
Warning:     spec.placement: empty
`
	got := printed(t, func(b *bytes.Buffer) error { readmodel.WriteExplanation(b, p, readmodel.Fleet{}); return nil })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("explain (-want +got):\n%s", diff)
	}
}

// A feasible cluster that spreadConstraints (or the division) left out is
// said to be not selected, and why; it read as if it were placed on.
func TestExplainSaysWhyAFeasibleClusterIsNotSelected(t *testing.T) {
	spread := &events.Binding{Key: appKey, Spec: &policy.PropagationSpec{Placement: policy.Placement{
		SpreadConstraints: []policy.SpreadConstraint{{SpreadByField: "cluster", MaxGroups: 1, MinGroups: 1}}}}}
	for _, c := range []struct {
		name    string
		binding *events.Binding
		want    string
	}{
		{"spreadConstraints", spread, "  cluster2   feasible   0       not selected: spreadConstraints chose other clusters (by score)\n"},
		{"the division", &events.Binding{Key: appKey}, "  cluster2   feasible   0       not selected: the division gave it no replicas\n"},
	} {
		p := events.PlacementDecision{Key: appKey, Generation: 1, Scheduled: true, Strategy: "Divided", DecidedAt: recordedAt, Binding: c.binding,
			Feasible: []string{"cluster1", "cluster2"}, Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 2}}}
		got := printed(t, func(b *bytes.Buffer) error { readmodel.WriteExplanation(b, p, readmodel.Fleet{}); return nil })
		if !strings.Contains(got, c.want) || !strings.Contains(got, "  cluster1   feasible   0       \n") {
			t.Errorf("%s: explain:\n%s\nwant the line:\n%s", c.name, got, c.want)
		}
	}
}
