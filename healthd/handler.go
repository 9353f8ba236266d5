package healthd

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// HandleMember follows registrations: a new or changed cluster gets a
// fresh prober, a deregistered one loses its prober.
func (d *Daemon) HandleMember(ctx context.Context, e events.Event) error {
	var r events.ClusterRegistration
	if err := events.Decode(e, &r); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch events.Type(e.Type()) {
	case events.TypeClusterDeregistered:
		old, counts := d.members.Deregistered(d.probers, r.Name, r.Generation)
		if !counts {
			return nil // a registration newer than this deregistration holds
		}
		if old != nil {
			d.metrics.forget(r.Name)
		}
		delete(d.lastHealth, r.Name) // a cluster registered again starts afresh
		return nil
	case events.TypeClusterRegistered:
		if !d.members.Registered(d.probers, r.Name, r.Generation) {
			return nil // older than the cluster's deregistration, or than its prober's registration
		}
	default:
		return events.Permanent(fmt.Errorf("healthd does not handle %q", e.Type()))
	}
	taints := d.taints.For(policy.FactsOf(r.Name, r.Labels, r.Spec))
	tracker, republish := NewTracker(d.cfg.Thresholds(), taints), false
	if last, found := d.lastHealth[r.Name]; found {
		tracker, republish = RestoreTracker(d.cfg.Thresholds(), taints, last.Health), last.Unstored
		delete(d.lastHealth, r.Name)
	}
	if old, ok := d.members.Stop(d.probers, r.Name); ok {
		tracker, republish = old.snapshot(), false
		tracker.UsePolicy(taints)
	}
	p := &prober{d: d, reg: r, tracker: tracker, republish: republish, log: d.deps.Log.With(zap.String("cluster", r.Name))}
	d.members.Start(ctx, d.probers, r.Name, r.Generation, p)
	if d.in != nil {
		d.in.Nudge() // a new cluster's lease is taken now, not a third of a lease later
	}
	return nil
}
