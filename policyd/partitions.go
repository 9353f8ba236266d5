package policyd

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Several policyd instances (DESIGN.md §7). Every instance reads every
// input, in stream order, through its own slot's consumer. What templates
// of every partition share — policies, overrides, clusters, credentials,
// interpreters, and the templates another may depend on (ConfigMaps,
// Secrets, PersistentVolumeClaims, ServiceAccounts, PriorityClasses) — every
// instance takes into its state, so their records and effects agree; every
// other template only the holder of its partition keeps (othersOnly).
// Only the holder of the partition of an effect's key publishes the effect
// (Handler.publish), and only the owner of an input's key dead-letters it
// (Handle).
//
// A partition's new owner (TakeOver) loads its templates from what was
// published, publishes what its state holds newer than the stream, handles
// the partition's latest inputs the published records do not yet carry,
// and rebinds its templates against the policies it holds now: what the
// last owner had not done when it died or let the partition go. A
// partition let go is forgotten (Forget).
//
// An instance that starts while others run rebuilds from what was
// published and replays the input stream from its start (Daemon.Run):
// resuming its consumer would miss shared inputs the others handled
// meanwhile. A replayed input whose object's published records already
// carry a later input is skipped unread (replayedAlready); one handled
// again publishes only what it changes (replaying).

// SetOwner makes the handler publish only for keys owns reports held
// (nil: every key), and keep only the templates of keys keeps reports
// kept, beside the shared objects (nil: those it owns).
func (h *Handler) SetOwner(owns, keeps func(events.ObjectKey) bool) {
	h.owns, h.keeps = owns, keeps
	if keeps == nil {
		h.keeps = owns
	}
}

// mine reports whether this instance publishes for key.
func (h *Handler) mine(key events.ObjectKey) bool { return h.owns == nil || h.owns(key) }

// shared reports whether every instance keeps key's object: anything but
// a template, and the templates others may depend on. While an
// interpreter customization exists every template is shared: its
// dependency scripts may select any.
func (h *Handler) shared(key events.ObjectKey) bool {
	if strings.HasSuffix(key.Group, "karmada.io") || len(h.st.interpreters) > 0 {
		return true
	}
	switch {
	case key.Group == "" && (key.Kind == "ConfigMap" || key.Kind == "Secret" || key.Kind == "PersistentVolumeClaim" || key.Kind == "ServiceAccount"):
		return true
	case key.Kind == policy.KindPriorityClass:
		return true
	}
	return false
}

// othersOnly reports whether the input ctx delivers concerns a template
// only another instance keeps.
func (h *Handler) othersOnly(ctx context.Context) bool {
	k, ok := inputKey(ctx)
	return ok && h.keeps != nil && !h.keeps(k) && !h.shared(k)
}

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

// unanswered reports whether a take-over catching up is handling an input
// whose rejection the stream lacks: its last owner rejected it without
// publishing that (it died, or its lease view lapsed), and the CLI that
// applied it waits for the answer. Without what the stream holds (nil),
// every rejection is answered again, which the stream deduplicates within
// its window.
func (h *Handler) unanswered(key events.ObjectKey, input string) bool {
	return h.catchingUp && (h.answered == nil || h.answered[key] != input)
}

// replaying reports whether ctx delivers an input handled again to catch
// the state up: what it caused was published when it was first handled.
func (h *Handler) replaying(ctx context.Context) bool {
	if h.catchingUp {
		return true
	}
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

// Forget drops the templates of the keys let go that only their owner
// keeps.
func (h *Handler) Forget(lost func(events.ObjectKey) bool) {
	for _, k := range h.st.sortedTemplateKeys() {
		if lost(k) && !h.shared(k) {
			h.st.remove(k)
			delete(h.st.bindings, k)
			delete(h.st.bindingLive, k)
			delete(h.st.lapsed, k)
			delete(h.st.bindingCause, k)
			delete(h.st.inputs, k)
			delete(h.causes, k)
		}
	}
	for k := range h.withheld {
		if lost(k) {
			delete(h.withheld, k)
		}
	}
}

// withheldRejection is a rejection not published, and the input sequence
// it answers.
type withheldRejection struct {
	event    events.Event
	sequence uint64
}

// withhold keeps the rejection of an input of key that this instance
// handled while keeping key's partition without holding its lease: a lone
// instance whose lease view lapsed publishes nothing meanwhile, and holding
// the partition again republishes what its state holds (publishNewer),
// which a rejection is not part of. The CLI that applied the object waits
// for it. Another instance taking the partition over answers the input
// itself (it handles the latest inputs the stream's records lack).
func (h *Handler) withhold(ctx context.Context, key events.ObjectKey, rejection events.Event) {
	d, ok := events.DeliveryOf(ctx)
	if !ok || h.keeps == nil || !h.keeps(key) {
		return
	}
	h.withheld[key] = withheldRejection{event: rejection, sequence: d.Sequence}
}

// cause is the causation and correlation an effect of an input carries.
type cause struct{ causation, correlation string }

// causeOf is what events.CausedBy would stamp for e.
func causeOf(e events.Event) cause {
	corr := events.CorrelationID(e)
	if corr == "" {
		corr = e.ID()
	}
	return cause{causation: e.ID(), correlation: corr}
}

// stamp marks out as caused as c says.
func (c cause) stamp(out *events.Event) {
	out.SetExtension(events.ExtCausationID, c.causation)
	out.SetExtension(events.ExtCorrelationID, c.correlation)
}

// Input is an input as its stream holds it.
type Input struct {
	Event    events.Event
	Subject  string
	Sequence uint64
}

// TakeOver makes this instance the publisher for the keys taken: it loads
// their templates from pub (what the stream holds), publishes what its
// state holds newer than the stream (stored registrations are regs),
// handles the latest inputs (latest, one per object) newer than what
// pub's records carry, and rebinds every taken template. It returns how
// many events the stream lacked that the state held (publishNewer).
func (h *Handler) TakeOver(ctx context.Context, pub published, regs map[string]events.ClusterRegistration, latest []Input, taken func(events.ObjectKey) bool) (int, error) {
	for _, k := range sortedKeys(pub.Records) {
		r := pub.Records[k]
		if old, ok := h.st.records[k]; taken(k) && r.Role == events.RoleTemplate && (!ok || r.Generation > old.Generation) {
			if err := h.st.put(r); err != nil {
				h.log.Warn("taking over: a stored record is unreadable", zap.Stringer("key", k), zap.Error(err))
			}
		}
	}
	for k, pb := range pub.Bindings {
		if b, ok := h.st.bindings[k]; taken(k) && (!ok || pb.Revision > b.Revision) {
			h.st.bindings[k], h.st.bindingLive[k], h.st.bindingCause[k] = pb, pub.Live[k], pub.Causes[k]
			h.st.lapsed[k] = pub.ClaimLapse(k) != ""
		}
	}
	for k, seq := range pub.removed {
		if taken(k) {
			h.st.inputs[k] = max(h.st.inputs[k], seq)
		}
	}
	// What the state holds newer than the stream comes first: what the
	// inputs handled below cause is newer still.
	missing, err := h.publishNewer(ctx, pub, regs, taken)
	if err != nil {
		return missing, err
	}
	h.catchingUp, h.answered = true, pub.rejected
	defer func() { h.catchingUp, h.answered = false, nil }()
	cause := map[events.ObjectKey]events.Event{}
	for _, in := range latest {
		k, err := events.ParseSubjectKey(in.Subject)
		if err != nil || !taken(k) || in.Sequence <= h.st.inputs[k] {
			continue
		}
		cause[k] = in.Event
		err = h.dispatch(events.WithDelivery(ctx, events.Delivery{Stream: events.StreamInput, Subject: in.Subject, Sequence: in.Sequence, Delivered: 1}), in.Event)
		if err != nil && !events.IsPermanent(err) {
			return missing, err
		}
	}
	for _, k := range h.st.sortedTemplateKeys() {
		if taken(k) {
			if _, err := h.rebind(ctx, cause[k], k); err != nil {
				return missing, err
			}
		}
	}
	return missing, nil
}

// publishNewer publishes, for the keys taken, what the state holds and
// the stream lacks: bindings by revision, records by generation,
// registrations by generation, and removals whose input this instance
// has read.
func (h *Handler) publishNewer(ctx context.Context, pub published, regs map[string]events.ClusterRegistration, taken func(events.ObjectKey) bool) (int, error) {
	n := 0
	send := func(owner events.ObjectKey, t events.Type, natsSubject, subject, id string, data any) error {
		if !taken(owner) || !h.mine(owner) {
			return nil
		}
		out, err := events.NewWithID(id, t, h.source, subject, data)
		if err != nil {
			return err
		}
		if c, ok := h.causes[owner]; ok {
			c.stamp(&out)
		}
		n++
		return events.PublishEffect(ctx, h.pub, natsSubject, out)
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
	for _, k := range sortedKeys(pub.Records) {
		pr := pub.Records[k]
		if _, ok := h.st.records[k]; ok || h.st.inputs[k] <= pr.InputSequence {
			continue // still there, or this instance has not read the input that removed it
		}
		removed := events.ObjectRecord{Key: k, APIVersion: pr.APIVersion, Generation: pr.Generation, Role: pr.Role, UpdatedAt: h.now().UTC(), InputSequence: h.st.inputs[k]}
		if err := send(k, events.TypeObjectRemoved, events.ObjectSubject(k), k.String(), events.DeterministicID("removed", k.String(), fmt.Sprint(pr.Generation), "taken over"), removed); err != nil {
			return n, err
		}
	}
	for _, k := range sortedKeys(h.withheld) {
		w := h.withheld[k]
		if !taken(k) || !h.mine(k) {
			continue
		}
		if h.st.inputs[k] > w.sequence {
			delete(h.withheld, k)
			continue // a newer input of the object was handled since
		}
		n++
		if err := events.PublishEffect(ctx, h.pub, events.RejectedSubject(k), w.event); err != nil {
			return n, err // kept for the next take-over
		}
		delete(h.withheld, k)
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
