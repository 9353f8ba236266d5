package policyd

import (
	"context"
	"slices"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// ownership is what a policyd instance knows of its partitions, beside
// the leases (natsbus.Instance), under Daemon.mu.
type ownership struct {
	// loaded: the partitions whose templates the state holds — held, or
	// held until a lapse of the lease view: their inputs are still taken
	// into the state, unpublished, so that holding them again needs only
	// what was not published meanwhile (republish).
	loaded, republish map[string]bool
	// everyTemplate: the templates of the partitions not held, which this
	// instance skipped until an interpreter customization made every
	// template shared, have been read from the stream (loadEveryTemplate).
	everyTemplate bool
	// parked: inputs of partitions held but not loaded yet, handled once
	// their take-over has loaded them (they arrived after it read the
	// stream, or while it did).
	parked []parkedInput
}

// parkedInput is an input waiting for its partition's take-over.
type parkedInput struct {
	event    events.Event
	delivery events.Delivery
	item     string
}

// inPartitions reports whether a key's partition is one of items.
func inPartitions(items []string, n int) func(events.ObjectKey) bool {
	return func(k events.ObjectKey) bool {
		return slices.Contains(items, events.PartitionItem(events.Partition(k, n)))
	}
}

// wire makes the handler publish for the partitions in holds and has
// loaded, and keep the templates of those it has loaded.
func (d *Daemon) wire(in *natsbus.Instance, n int) {
	item := func(k events.ObjectKey) string { return events.PartitionItem(events.Partition(k, n)) }
	d.own = ownership{loaded: map[string]bool{}, republish: map[string]bool{}}
	d.h.SetOwner(func(k events.ObjectKey) bool { return d.own.loaded[item(k)] && in.Owns(item(k)) },
		func(k events.ObjectKey) bool { return d.own.loaded[item(k)] })
}

// handleInput is the input consumer's handler: an input of a partition
// held but not loaded yet waits for the partition's take-over (park); any
// other is handled now.
func (d *Daemon) handleInput(ctx context.Context, e events.Event, in *natsbus.Instance, n int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.park(ctx, e, in, n) {
		return nil
	}
	return d.h.Handle(ctx, e)
}

// park keeps the input ctx delivers for its partition's take-over when
// this instance holds the partition but has not loaded it (under mu).
func (d *Daemon) park(ctx context.Context, e events.Event, in *natsbus.Instance, n int) bool {
	k, ok := inputKey(ctx)
	if !ok || d.h.shared(k) {
		return false
	}
	item := events.PartitionItem(events.Partition(k, n))
	if d.own.loaded[item] || !in.Owns(item) {
		return false
	}
	dl, _ := events.DeliveryOf(ctx)
	d.own.parked = append(d.own.parked, parkedInput{event: e, delivery: dl, item: item})
	return true
}

// moved forgets what only the owner of the partitions lost keeps, and
// leaves the partitions gained to the take-over: loaded ones (held again
// after a lapse) to publish what was not, the others to load.
func (d *Daemon) moved(gained, lost []string, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, item := range lost {
		delete(d.own.loaded, item)
		delete(d.own.republish, item)
	}
	d.own.parked = slices.DeleteFunc(d.own.parked, func(p parkedInput) bool { return slices.Contains(lost, p.item) })
	for _, item := range gained {
		if d.own.loaded[item] {
			d.own.republish[item] = true
		}
	}
	if len(lost) > 0 {
		d.h.Forget(inPartitions(lost, n))
	}
}

// takeOver makes this instance the publisher of the partitions it holds
// and has not loaded, or has held again after a lapse
// (Handler.TakeOver); the inputs parked for them meanwhile are handled
// after. The stream is read without the lock, so the consumer goes on
// meanwhile. A failure is logged and tried again on the next call.
func (d *Daemon) takeOver(ctx context.Context, in *natsbus.Instance, n int) {
	d.mu.Lock()
	var todo []string
	loading := false // a partition not loaded needs its latest inputs; one held again does not
	for _, item := range in.Owned() {
		if !d.own.loaded[item] || d.own.republish[item] {
			todo = append(todo, item)
			loading = loading || !d.own.loaded[item]
		}
	}
	d.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	p, err := readPublished(ctx, d.deps.Bus)
	var regs map[string]events.ClusterRegistration
	var ms []natsbus.Message
	if err == nil {
		regs, err = readRegistrations(ctx, d.deps.Bus)
	}
	if err == nil && loading {
		ms, err = d.deps.Bus.LatestPerSubject(ctx, events.StreamInput, events.AllInput)
	}
	if err == nil && loading {
		p.rejected, err = readRejected(ctx, d.deps.Bus)
	}
	if err != nil {
		d.deps.Log.Warn("take over partitions: reading what was published", zap.Strings("partitions", todo), zap.Error(err))
		return
	}
	latest := make([]Input, 0, len(ms))
	for _, m := range ms {
		if m.Err == nil {
			latest = append(latest, Input{Event: m.Event, Subject: m.Subject, Sequence: m.Sequence})
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// Lost meanwhile, or (its inputs not read) lost and held again: the
	// next call takes it.
	todo = slices.DeleteFunc(todo, func(item string) bool { return !in.Owns(item) || !loading && !d.own.loaded[item] })
	loaded := map[string]bool{}
	for _, item := range todo {
		loaded[item] = d.own.loaded[item]
		d.own.loaded[item] = true
	}
	missing, err := d.h.TakeOver(ctx, p, regs, latest, inPartitions(todo, n))
	if err != nil {
		for _, item := range todo {
			d.own.loaded[item] = loaded[item]
		}
		d.deps.Log.Warn("take over partitions", zap.Strings("partitions", todo), zap.Error(err))
		return
	}
	for _, item := range todo {
		delete(d.own.republish, item)
	}
	var waiting []parkedInput
	for _, pi := range d.own.parked {
		if !slices.Contains(todo, pi.item) {
			waiting = append(waiting, pi)
			continue
		}
		if err := d.h.Handle(events.WithDelivery(ctx, pi.delivery), pi.event); err != nil && !events.IsPermanent(err) {
			d.deps.Log.Warn("an input parked for a take-over failed; the next owner's take-over reads it from the stream", zap.String("id", pi.event.ID()), zap.Error(err))
		}
	}
	d.own.parked = waiting
	if missing > 0 {
		d.deps.Log.Info("took over partitions: published what was not", zap.Strings("partitions", todo), zap.Int("events", missing))
	}
}

// loadEveryTemplate reads, once an interpreter customization exists, the
// templates this instance skipped before because another instance's
// partition held them: from then on every template is shared (a dependency
// script may select any), and those applied before would otherwise stay
// unknown to this instance's scripts until applied again. Only what the
// state lacks or holds older is taken; then the templates this instance
// holds are bound again (publishing only what changes). A failure is
// logged and tried again on the next call.
func (d *Daemon) loadEveryTemplate(ctx context.Context) {
	d.mu.Lock()
	if len(d.h.st.interpreters) == 0 {
		d.own.everyTemplate = false
	}
	todo := len(d.h.st.interpreters) > 0 && !d.own.everyTemplate
	d.mu.Unlock()
	if !todo {
		return
	}
	p, err := readPublished(ctx, d.deps.Bus)
	if err != nil {
		d.deps.Log.Warn("interpreters: reading every template", zap.Error(err))
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.h.st.interpreters) == 0 {
		return // deleted meanwhile
	}
	read := 0
	for _, k := range sortedKeys(p.Records) {
		r := p.Records[k]
		if old, ok := d.h.st.records[k]; r.Role != events.RoleTemplate || ok && old.Generation >= r.Generation {
			continue
		}
		if err := d.h.st.put(r); err != nil {
			d.deps.Log.Warn("interpreters: a stored template is unreadable", zap.Stringer("key", k), zap.Error(err))
			continue
		}
		read++
	}
	for _, k := range d.h.st.sortedTemplateKeys() {
		if !d.h.mine(k) {
			continue
		}
		if _, err := d.h.rebind(ctx, events.Event{}, k); err != nil {
			d.deps.Log.Warn("interpreters: binding again after reading every template", zap.Error(err))
			return
		}
	}
	d.own.everyTemplate = true
	if read > 0 {
		d.deps.Log.Info("interpreters: read the templates of the other partitions", zap.Int("templates", read))
	}
}
