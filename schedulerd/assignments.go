package schedulerd

import (
	"context"
	"slices"
	"strconv"
	"strings"

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
// Only a cluster in Pull mode (policy.ClusterSpec.PullMode) has a reader
// of its assignments, so a cluster that keeps a copy hears of it only
// then: one stored event per concerned cluster on every placement cost a
// Duplicated template over 100 clusters about 11 times the CPU of the
// placement itself. That a cluster holds the template no more (removed,
// or no longer among the targets) is written whatever its mode, which is
// rare and cheap: the last assignment of every key then never tells a
// cluster that turns to Pull (or deregisters) to hold what it should not,
// and assignAllTo need only write what it holds.
func (h *Handler) assign(ctx context.Context, placed events.Event, typ events.Type, p events.PlacementDecision, last *events.PlacementDecision) error {
	clusters := events.AssignedClusters
	if typ == events.TypeWorkAssigned && !h.members.anyPulls() {
		// No member pulls: only the clusters p no longer holds have
		// anything to hear (that it left them), and a first placement
		// none, without listing and sorting its clusters.
		clusters = events.LeftClusters
	}
	for _, c := range clusters(p, last) {
		if typ == events.TypeWorkAssigned && holds(p, c) && !h.pulls(c) {
			continue
		}
		if err := h.publishAssignment(ctx, placed, events.DeterministicID("assignment", placed.ID(), c), typ, p, c); err != nil {
			return err
		}
	}
	return nil
}

// holds reports whether placement p keeps a copy in cluster c (a target).
func holds(p events.PlacementDecision, c string) bool {
	return slices.ContainsFunc(p.Clusters, func(t events.TargetCluster) bool { return t.Name == c })
}

// assignAllTo publishes cluster c's assignment of every placement that
// keeps a copy in it and whose binding is the one it was decided on (a newer
// binding is decided, and assigned, on its own), in key order, caused by
// cause: c turned to Pull mode.
func (h *Handler) assignAllTo(ctx context.Context, cause events.Event, c string) error {
	for _, p := range h.placementsOf(c) {
		if err := h.publishAssignment(ctx, cause, events.DeterministicID("assignment", cause.ID(), p.Key.String(), c), events.TypeWorkAssigned, p, c); err != nil {
			return err
		}
	}
	return nil
}

// placementsOf are the remembered placements that keep a copy in cluster
// c, each with the binding it was decided on, in key order. (That c holds
// a template no more is assigned whatever c's mode: see assign.)
func (h *Handler) placementsOf(c string) []events.PlacementDecision {
	var out []events.PlacementDecision
	for k, p := range h.book.placements {
		b, ok := h.book.bindings[k]
		if !ok || b.Revision != p.BindingRevision || !holds(p, c) {
			continue
		}
		p.Binding = &b
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b events.PlacementDecision) int { return strings.Compare(a.Key.String(), b.Key.String()) })
	return out
}

// AssignMissing publishes, for cluster c in Pull mode, the assignment of
// every placement that keeps a copy in it and that stored (c's last
// assignment of each key, as the stream holds them) lacks or holds for an
// older decision; it returns how many. This is assignAllTo for a cluster
// that turned to Pull while schedulerd was down, run at start from state:
// a placement and its assignment are the same decision when they share
// the binding revision and the decision time.
func (h *Handler) AssignMissing(ctx context.Context, c string, stored map[events.ObjectKey]events.PlacementDecision) (int, error) {
	if !h.pulls(c) {
		return 0, nil
	}
	n := 0
	for _, p := range h.placementsOf(c) {
		if !h.owns(p.Key) {
			continue // its partition's owner assigns it
		}
		if a, ok := stored[p.Key]; ok && a.BindingRevision == p.BindingRevision && a.DecidedAt.Equal(p.DecidedAt) && holds(a, c) {
			continue
		}
		id := events.DeterministicID("assignment-missing", p.Key.String(), c, strconv.FormatInt(p.BindingRevision, 10), p.DecidedAt.String())
		if err := h.publishAssignment(ctx, events.Event{}, id, events.TypeWorkAssigned, p, c); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// PullClusters are the registered clusters in Pull mode, sorted.
func (h *Handler) PullClusters() []string {
	var out []string
	for name, m := range h.members.byName {
		if m.reg.Spec.PullMode() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func (h *Handler) publishAssignment(ctx context.Context, cause events.Event, id string, typ events.Type, p events.PlacementDecision, c string) error {
	out, err := events.NewWithID(id, typ, h.source, p.Key.String(), events.AssignmentOf(p, h.facts(c)))
	if err != nil {
		return events.Permanent(err)
	}
	if cause.ID() != "" {
		events.CausedBy(&out, cause)
	}
	return events.PublishEffect(ctx, h.pub, events.AssignmentSubject(c, p.Key), out)
}

// pulls reports whether cluster c is registered in Pull mode.
func (h *Handler) pulls(c string) bool {
	m, ok := h.members.byName[c]
	return ok && m.reg.Spec.PullMode()
}

// facts are what override rules look at of cluster c, as registered (its
// name alone once it has left).
func (h *Handler) facts(c string) policy.ClusterFacts {
	if m, ok := h.members.byName[c]; ok {
		return policy.FactsOf(c, m.reg.Labels, m.reg.Spec)
	}
	return policy.ClusterFacts{Name: c}
}
