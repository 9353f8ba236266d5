package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

func TestClusters(t *testing.T) {
	r := &recorder{t: t}
	regB := r.stored(events.TypeClusterRegistered, events.ClusterRegistration{Name: "b", Credentials: &events.SealedSecret{Name: "b-kubeconfig"}})
	regA := r.stored(events.TypeClusterRegistered, events.ClusterRegistration{Name: "a"})
	gone := r.stored(events.TypeClusterDeregistered, events.ClusterRegistration{Name: "c"})
	health := events.ClusterHealth{Cluster: "a", Ready: true, State: events.ClusterStateReady, Since: t0}
	healthA := r.stored(events.TypeClusterHealthChanged, health)
	capB := r.stored(events.TypeClusterCapacityReported, events.ClusterCapacity{Cluster: "b", Nodes: 3, APIEnablements: []policy.APIEnablement{{GroupVersion: "v1"}}})
	strayHealth := r.stored(events.TypeClusterHealthChanged, events.ClusterHealth{Cluster: "c", State: events.ClusterStateUnreachable})
	got := Clusters([]Stored{regB, regA, gone}, []Stored{healthA, capB, strayHealth})
	want := []Cluster{
		{Registration: events.ClusterRegistration{Name: "a"}, Health: &health, JoinedAt: regA.Time},
		{Registration: events.ClusterRegistration{Name: "b"}, Capacity: &events.ClusterCapacity{Cluster: "b", Nodes: 3}, JoinedAt: regB.Time},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}

func TestExplainPlacement(t *testing.T) {
	r := &recorder{t: t}
	binding := &events.Binding{Key: myApp, Replicas: 3}
	decided := r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: myApp, Binding: binding})
	withdrawn := r.stored(events.TypePlacementRemoved, events.PlacementDecision{Key: mySvc})
	ms := []Stored{decided, withdrawn}
	for _, tt := range []struct {
		name    string
		ref     string
		want    events.PlacementDecision
		wantErr string
	}{
		{"a placed template's decision comes with its binding", "deploy/my-app", events.PlacementDecision{Key: myApp, Binding: binding}, ""},
		{"a withdrawn placement says the template was deleted", "svc/my-app", events.PlacementDecision{Key: mySvc}, "svc/my-app -n default was deleted; its placement was withdrawn"},
		{"a template never placed is not found", "cm/my-app", events.PlacementDecision{},
			"no placement for cm/my-app -n default: is the template applied and claimed by a policy? (flotilla get policies)"},
		{"a bare name is not enough", "my-app", events.PlacementDecision{}, `"my-app": want KIND/NAME, e.g. deployment/my-app`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExplainPlacement(ms, tt.ref, "default")
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(events.Binding{})); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}
