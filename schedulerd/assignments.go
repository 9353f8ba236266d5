package schedulerd

import (
	"context"
	"slices"

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
//
// Only a cluster in Pull mode has a reader of its assignments (push mode's
// executord reads the placements), so only those are written: one more
// stored event per cluster on every placement cost a Duplicated template
// over 100 clusters about 11 times the CPU of the placement itself.
// A cluster that turns to Pull gets the assignments of the placements
// that concern it then (assignAllTo).
func (h *Handler) assign(ctx context.Context, placed events.Event, typ events.Type, p events.PlacementDecision, last *events.PlacementDecision) error {
	for _, c := range events.AssignedClusters(p, last) {
		if !h.pulls(c) {
			continue
		}
		if err := h.publishAssignment(ctx, placed, events.DeterministicID("assignment", placed.ID(), c), typ, p, c); err != nil {
			return err
		}
	}
	return nil
}

// assignAllTo publishes cluster c's assignment of every placement that
// concerns it, caused by cause (c turned to Pull mode).
func (h *Handler) assignAllTo(ctx context.Context, cause events.Event, c string) error {
	for key, p := range h.book.placements {
		if !slices.Contains(events.AssignedClusters(p, nil), c) {
			continue
		}
		if err := h.publishAssignment(ctx, cause, events.DeterministicID("assignment", cause.ID(), key.String(), c), events.TypeWorkAssigned, p, c); err != nil {
			return err
		}
	}
	return nil
}

func (h *Handler) publishAssignment(ctx context.Context, cause events.Event, id string, typ events.Type, p events.PlacementDecision, c string) error {
	out, err := events.NewWithID(id, typ, h.source, p.Key.String(), events.AssignmentOf(p, h.facts(c)))
	if err != nil {
		return events.Permanent(err)
	}
	events.CausedBy(&out, cause)
	return events.PublishEffect(ctx, h.pub, events.AssignmentSubject(c, p.Key), out)
}

// pulls reports whether cluster c is registered in Pull mode.
func (h *Handler) pulls(c string) bool {
	m, ok := h.members.byName[c]
	return ok && m.reg.Spec.SyncMode == "Pull"
}

// facts are what override rules look at of cluster c, as registered (its
// name alone once it has left).
func (h *Handler) facts(c string) policy.ClusterFacts {
	if m, ok := h.members.byName[c]; ok {
		return policy.FactsOf(c, m.reg.Labels, m.reg.Spec)
	}
	return policy.ClusterFacts{Name: c}
}
