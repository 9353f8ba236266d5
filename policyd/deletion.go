package policyd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

// decodeRef decodes the data of a deletion or reschedule request, which
// object it names and its key, delivered on that key's subject.
func decodeRef(ctx context.Context, e events.Event, what string) (readmodel.ObjectIdentity, events.ObjectKey, error) {
	var r readmodel.ObjectIdentity
	if err := events.UnmarshalJSON(e.Data(), &r); err != nil || r.Kind == "" || r.Metadata.Name == "" {
		return r, events.ObjectKey{}, events.Permanent(fmt.Errorf("%s needs apiVersion, kind and metadata.name: %v", what, err))
	}
	key := r.Key()
	return r, key, onItsSubject(ctx, key)
}

// HandleObjectDeleted removes an object and what depended on it.
func (h *Handler) HandleObjectDeleted(ctx context.Context, e events.Event) error {
	obj, key, err := decodeRef(ctx, e, "deletion")
	if err != nil {
		return err
	}
	rec, ok := h.st.records[key]
	if !ok {
		// Deleting what is not there is not an error (kubectl delete --ignore-not-found semantics);
		// the removed event still answers the CLI.
		rec = events.ObjectRecord{Key: key, APIVersion: obj.APIVersion, Role: events.RoleOf(obj.APIVersion, obj.Kind, obj.Metadata.Namespace)}
	}
	seq, stale := h.st.superseded(ctx, key)
	if stale {
		return h.ignore(key, rec.Role, seq)
	}
	if !ok && h.replaying(ctx) {
		h.st.handled(key, seq)
		return nil // answered when first handled
	}
	if !ok {
		// The removed event still answers the CLI.
		return h.publishRemoved(ctx, e, rec, seq)
	}
	return h.removeObject(ctx, e, rec, seq)
}

// publishRemoved publishes that rec's object is gone, as handled at seq.
func (h *Handler) publishRemoved(ctx context.Context, e events.Event, rec events.ObjectRecord, seq uint64) error {
	key := rec.Key
	removed := events.ObjectRecord{Key: key, APIVersion: rec.APIVersion, Generation: rec.Generation, Role: rec.Role, UpdatedAt: h.now().UTC(), InputSequence: seq}
	if err := h.publish(ctx, e, key, events.TypeObjectRemoved, events.ObjectSubject(key), key.String(),
		events.DeterministicID("removed", key.String(), fmt.Sprint(rec.Generation), e.ID()), removed); err != nil {
		return err
	}
	h.st.handled(key, seq)
	h.metrics.objects.WithLabelValues(removed.Role, "removed").Inc()
	return nil
}

// removeObject removes the accepted object rec, deleted by e (input
// sequence seq), and what depended on it.
func (h *Handler) removeObject(ctx context.Context, e events.Event, rec events.ObjectRecord, seq uint64) error {
	if err := h.publishRemoved(ctx, e, rec, seq); err != nil {
		return err
	}
	undo := h.st.remove(rec.Key)
	err := h.removeDefinedResources(ctx, e, rec, seq)
	if err == nil {
		err = h.removalEffects(ctx, e, rec.Key, rec)
	}
	if err != nil {
		// Not all published: the redelivery must find the object to
		// publish them (each effect is idempotent, and the removed event's
		// id is deterministic). Without the undo it found nothing and
		// answered, and the binding or registration stayed live.
		undo()
		return err
	}
	return nil
}

// removeDefinedResources removes, with a CustomResourceDefinition, the
// custom resources of the kind it defined, as the API server does: they
// stayed templates of a kind no member serves any more, and failed in
// every member. Each goes as its own deletion would (removed, its binding
// withdrawn); one whose effects fail is put back, so that the CRD's
// redelivery removes it again.
func (h *Handler) removeDefinedResources(ctx context.Context, e events.Event, crd events.ObjectRecord, seq uint64) error {
	if crd.Role != events.RoleTemplate || crd.Key.Kind != kindCRD {
		return nil
	}
	var obj map[string]any
	if events.UnmarshalJSON(crd.Object, &obj) != nil {
		return nil
	}
	group, kind, ok := validation.DefinedKind(crd.APIVersion, crd.Key.Kind, obj)
	if !ok {
		return nil
	}
	var defined []events.ObjectRecord
	for k, r := range h.st.records {
		if k.Group == group && k.Kind == kind {
			defined = append(defined, r)
		}
	}
	slices.SortFunc(defined, func(a, b events.ObjectRecord) int { return strings.Compare(a.Key.String(), b.Key.String()) })
	for _, r := range defined {
		if err := h.removeObject(ctx, e, r, seq); err != nil {
			return err
		}
		h.log.Info("custom resource removed with its CustomResourceDefinition", zap.Stringer("key", r.Key), zap.Stringer("definition", crd.Key))
	}
	return nil
}

// removalEffects publishes what follows from removing rec's object, once
// the state has forgotten it: the binding withdrawn, the cluster
// deregistered, or the templates a policy claimed bound again.
func (h *Handler) removalEffects(ctx context.Context, e events.Event, key events.ObjectKey, rec events.ObjectRecord) error {
	switch rec.Role {
	case events.RoleTemplate:
		if err := h.unbind(ctx, e, key); err != nil {
			return err
		}
		return h.rebindDependents(ctx, e, key)
	case events.RoleCluster:
		if last, ok := h.st.registrations[key.Name]; ok {
			// The deregistration is a tombstone with the next generation:
			// a registration redelivered after it is older, and ignored.
			gen := last.Generation + 1
			if err := h.publish(ctx, e, key, events.TypeClusterDeregistered, events.MemberSubject(key.Name), key.Name,
				events.DeterministicID("deregistered", key.Name, e.ID()), events.ClusterRegistration{Name: key.Name, Generation: gen}); err != nil {
				return err
			}
			delete(h.st.registrations, key.Name)
			h.st.deregistered[key.Name] = gen
		}
		return nil
	default:
		return h.effects(ctx, e, rec)
	}
}
