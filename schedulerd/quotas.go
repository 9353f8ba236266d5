package schedulerd

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// The shell around core.Placed: FederatedResourceQuotas arrive as policyd's
// object records, and work a quota refused is decided again, in queue
// order, whenever room may have been freed (a workload removed, a quota
// changed or removed): Karmada retries a QuotaExceeded binding from its
// backoff queue; here the retry waits for a change that can admit it.

// HandleQuotaChanged records a FederatedResourceQuota applied or deleted
// and decides again what the namespace's quotas refused.
func (h *Handler) HandleQuotaChanged(ctx context.Context, e events.Event) error {
	var rec events.ObjectRecord
	if err := events.Decode(e, &rec); err != nil {
		return err
	}
	if rec.Role != events.RoleQuota {
		return events.Permanent(fmt.Errorf("schedulerd reads only FederatedResourceQuota records, got %s (%s)", rec.Key, rec.Role))
	}
	if events.Type(e.Type()) == events.TypeObjectRemoved {
		h.placed.Quotas.RemoveQuota(rec.Key.Namespace, rec.Key.Name)
	} else {
		q, err := quotaOf(e)
		if err != nil {
			return events.Permanent(err)
		}
		h.placed.Quotas.SetQuota(q, nil)
	}
	return h.retryQuotaRefused(ctx, e, rec.Key.Namespace)
}

// quotaOf decodes the quota an object.accepted record carries.
func quotaOf(e events.Event) (policy.FederatedResourceQuota, error) {
	var rec events.ObjectRecord
	var q policy.FederatedResourceQuota
	if err := events.Decode(e, &rec); err != nil {
		return q, err
	}
	if err := events.UnmarshalJSON(rec.Object, &q); err != nil {
		return q, fmt.Errorf("quota %s: %w", rec.Key, err)
	}
	q.Namespace, q.Name = rec.Key.Namespace, rec.Key.Name
	return q, nil
}

// retryQuotaRefused decides again, in queue order, the bindings of
// namespace whose last placement a quota refused.
func (h *Handler) retryQuotaRefused(ctx context.Context, cause events.Event, namespace string) error {
	keys := h.book.boundKeys(func(k events.ObjectKey, _ events.Binding) bool {
		p, ok := h.book.placements[k]
		return ok && k.Namespace == namespace && strings.HasPrefix(p.Error, policy.ReasonQuotaExceeded+":")
	})
	for _, k := range keys {
		if err := h.schedule(ctx, cause, k); err != nil {
			return err
		}
	}
	return nil
}

// restorePlaced rebuilds the peers and the ledger from the placements read
// back at start-up: each template's last placement, as placed, in key order.
func (h *Handler) restorePlaced() {
	keys := make([]events.ObjectKey, 0, len(h.book.placements))
	for k := range h.book.placements {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		b, ok := h.book.bindings[k]
		if !ok {
			continue
		}
		h.placed.Restore(&b, h.book.placements[k].Clusters)
		h.book.arrived(k)
	}
}
