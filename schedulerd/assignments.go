package schedulerd

import (
	"context"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// assign publishes, after the placement placed (of type typ) that replaced
// last (nil for none), what each cluster it concerns must now do
// (events.AssignedClusters, events.AssignmentOf): a member's executord
// reads only its cluster's assignments, never the placements, which carry
// every cluster's targets and overrides (DESIGN.md decision 23). Their ids
// derive from the placement's and the cluster, so a redelivered binding
// that makes the same decision stores each once.
func (h *Handler) assign(ctx context.Context, placed events.Event, typ events.Type, p events.PlacementDecision, last *events.PlacementDecision) error {
	for _, c := range events.AssignedClusters(p, last) {
		a := events.AssignmentOf(p, h.facts(c))
		out, err := events.NewWithID(events.DeterministicID("assignment", placed.ID(), c), typ, h.source, p.Key.String(), a)
		if err != nil {
			return events.Permanent(err)
		}
		events.CausedBy(&out, placed)
		if err := events.PublishEffect(ctx, h.pub, events.AssignmentSubject(c, p.Key), out); err != nil {
			return err
		}
	}
	return nil
}

// facts are what override rules look at of cluster c, as registered (its
// name alone once it has left).
func (h *Handler) facts(c string) policy.ClusterFacts {
	if m, ok := h.members.byName[c]; ok {
		return policy.FactsOf(c, m.reg.Labels, m.reg.Spec)
	}
	return policy.ClusterFacts{Name: c}
}
