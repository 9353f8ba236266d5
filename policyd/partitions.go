package policyd

import (
	"context"
	"fmt"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/readmodel"
)

// Several policyd instances (DESIGN.md §7). Every instance reads every
// input, in stream order, through its own slot's consumer, and takes it
// into its state: policies, overrides, clusters, interpreters and
// dependencies are shared by templates of every partition, and a
// template's binding revision continues from the last one. Only the
// instance holding the partition of an effect's key publishes the effect
// (Handler.publish), and only the owner of an input's key dead-letters it
// (Handle). So the instances' states agree, and a partition's new owner
// publishes what its state holds and the stream lacks (TakeOver): what the
// last owner had not published when it died or let the partition go.
//
// An instance that starts while others run rebuilds from what was
// published and replays the input stream from its start (Daemon.Run):
// resuming its consumer would miss what the others handled meanwhile.
// A replayed input whose object's published records already carry a later
// input is skipped unread (replayedAlready); one handled again publishes
// only what it changes (replaying).

// SetOwner makes the handler publish only for keys owns reports held
// (nil: every key).
func (h *Handler) SetOwner(owns func(events.ObjectKey) bool) { h.owns = owns }

// mine reports whether this instance publishes for key.
func (h *Handler) mine(key events.ObjectKey) bool { return h.owns == nil || h.owns(key) }

// clusterKey is the key of the Cluster object named name: its partition
// owns the cluster's registration.
func clusterKey(name string) events.ObjectKey {
	return events.KeyOf(policy.ClusterAPIVersion, policy.KindCluster, "", name)
}

// inputKey is the key of the object whose input subject ctx delivers.
func inputKey(ctx context.Context) (events.ObjectKey, bool) {
	d, ok := events.DeliveryOf(ctx)
	if !ok {
		return events.ObjectKey{}, false
	}
	k, err := events.ParseSubjectKey(d.Subject)
	return k, err == nil
}

// ownsInput reports whether this instance owns the input ctx delivers (an
// input on a subject naming no object belongs to the zero key's owner).
func (h *Handler) ownsInput(ctx context.Context) bool {
	k, _ := inputKey(ctx)
	return h.mine(k)
}

// replaying reports whether ctx delivers an input replayed to catch the
// state up: its effects were published when it was first handled.
func (h *Handler) replaying(ctx context.Context) bool {
	d, ok := events.DeliveryOf(ctx)
	return ok && d.Sequence <= h.replayThrough
}

// replayedAlready reports whether ctx delivers a replayed input older
// than the latest one of its object that the published records carry.
func (h *Handler) replayedAlready(ctx context.Context) bool {
	if !h.replaying(ctx) {
		return false
	}
	d, _ := events.DeliveryOf(ctx)
	k, ok := inputKey(ctx)
	return ok && d.Sequence <= h.st.inputs[k]
}

// TakeOver publishes, for the keys taken, what the state holds and the
// stream lacks (pub and regs are what the stream holds): bindings,
// records and registrations newer than the published ones, and removals
// the stream has not seen. A binding the stream holds newer than the
// state's is adopted. It returns how many events it published.
func (h *Handler) TakeOver(ctx context.Context, pub readmodel.Published, regs map[string]events.ClusterRegistration, taken func(events.ObjectKey) bool) (int, error) {
	n := 0
	send := func(owner events.ObjectKey, t events.Type, natsSubject, subject, id string, data any) error {
		if !taken(owner) || !h.mine(owner) {
			return nil
		}
		out, err := events.NewWithID(id, t, h.source, subject, data)
		if err != nil {
			return err
		}
		n++
		return events.PublishEffect(ctx, h.pub, natsSubject, out)
	}
	for k, pb := range pub.Bindings {
		if b, ok := h.st.bindings[k]; taken(k) && (!ok || pb.Revision > b.Revision) {
			h.st.bindings[k], h.st.bindingLive[k], h.st.bindingCause[k] = pb, pub.Live[k], pub.Causes[k]
		}
	}
	for _, k := range sortedKeys(h.st.bindings) {
		b := h.st.bindings[k]
		if pb, ok := pub.Bindings[k]; ok && pb.Revision >= b.Revision {
			continue
		}
		t := events.TypeBindingChanged
		if !h.st.bindingLive[k] {
			t = events.TypeBindingRemoved
		}
		if err := send(k, t, events.BindingSubject(k), k.String(), events.DeterministicID("binding", k.String(), fmt.Sprint(b.Revision)), b); err != nil {
			return n, err
		}
	}
	for _, k := range sortedKeys(h.st.records) {
		r := h.st.records[k]
		if r.Role == events.RoleTemplate && h.st.bindingLive[k] {
			continue // its binding carries it
		}
		if pr, ok := pub.Records[k]; ok && pr.Generation >= r.Generation {
			continue
		}
		if err := send(k, events.TypeObjectAccepted, events.ObjectSubject(k), k.String(), events.DeterministicID("accepted", k.String(), fmt.Sprint(r.Generation), "taken over"), r); err != nil {
			return n, err
		}
	}
	for k, pr := range pub.Records {
		if _, ok := h.st.records[k]; ok || h.st.inputs[k] <= pr.InputSequence {
			continue // still there, or this instance has not yet read the input that removed it
		}
		removed := events.ObjectRecord{Key: k, APIVersion: pr.APIVersion, Generation: pr.Generation, Role: pr.Role, UpdatedAt: h.now().UTC(), InputSequence: h.st.inputs[k]}
		if err := send(k, events.TypeObjectRemoved, events.ObjectSubject(k), k.String(), events.DeterministicID("removed", k.String(), fmt.Sprint(pr.Generation), "taken over"), removed); err != nil {
			return n, err
		}
	}
	for name, r := range h.st.registrations {
		if pr, ok := regs[name]; ok && pr.Generation >= r.Generation {
			continue
		}
		if err := send(clusterKey(name), events.TypeClusterRegistered, events.MemberSubject(name), name, events.DeterministicID("registered", name, fmt.Sprint(r.Generation)), r); err != nil {
			return n, err
		}
	}
	for name, gen := range h.st.deregistered {
		if pr, ok := regs[name]; !ok || pr.Generation >= gen {
			continue // never registered on the stream, or already gone from it
		}
		if err := send(clusterKey(name), events.TypeClusterDeregistered, events.MemberSubject(name), name, events.DeterministicID("deregistered", name, "taken over"), events.ClusterRegistration{Name: name, Generation: gen}); err != nil {
			return n, err
		}
	}
	return n, nil
}
