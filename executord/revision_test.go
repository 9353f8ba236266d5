package executord

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

// Two executords acting on one member at once, as an owner whose lease is
// lapsing and its successor may for a moment: the member object carries
// the binding revision it was applied for, and the one acting on an older
// placement neither applies over it nor deletes it.
func TestAnOlderPlacementNeitherAppliesOverNorDeletesALaterRevisionOnTheMember(t *testing.T) {
	tests := []struct {
		name  string
		stale events.PlacementDecision // what the lagging executord handles after the later one applied revision 2
	}{
		{"an older placement with other replicas applies nothing", placement(1, 0, on("member1", 1))},
		{"an older placement moving the template away deletes nothing", placement(1, 0, on("member2", 2))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, bus := eventstest.Server(t)
			member := newFakeMember(t)
			later := newTestWorker(t, newTestDaemon(t, bus, member, nil, prometheus.NewRegistry(), zap.NewNop()))
			lagging := newTestWorker(t, newTestDaemon(t, bus, member, nil, prometheus.NewRegistry(), zap.NewNop()))
			lagging.work[web] = events.WorkStatus{Key: web, Cluster: "member1", BindingRevision: 1, Phase: events.WorkRunning} // it applied revision 1 before

			handle(t, later, placement(2, 0, on("member1", 3)))
			handle(t, lagging, tt.stale)

			applies, deletes := member.counts()
			if applies != 1 || deletes != 0 {
				t.Errorf("member saw %d applies and %d deletes, want 1 and 0", applies, deletes)
			}
			member.mu.Lock()
			defer member.mu.Unlock()
			obj := member.objects["deployments/default/web"]
			if obj == nil {
				t.Fatal("revision 2's object is gone from the member")
			}
			got := map[string]any{
				"revision": obj["metadata"].(map[string]any)["annotations"].(map[string]any)[AnnotationBindingRevision],
				"replicas": obj["spec"].(map[string]any)["replicas"],
			}
			if diff := cmp.Diff(map[string]any{"revision": "2", "replicas": float64(3)}, got); diff != "" {
				t.Errorf("member object (-want +got):\n%s", diff)
			}
		})
	}
}
