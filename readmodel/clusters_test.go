package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
		{Registration: events.ClusterRegistration{Name: "b"}, Capacity: &events.ClusterCapacity{Cluster: "b", Nodes: 3, APIEnablements: []policy.APIEnablement{{GroupVersion: "v1"}}}, JoinedAt: regB.Time},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
}
