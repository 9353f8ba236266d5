package schedulerd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/clock"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

// Deps are what the daemon is wired to.
type Deps struct {
	Bus      *natsbus.Bus
	Log      *zap.Logger
	Health   *observe.Health
	Registry prometheus.Registerer
	// Clock is the time of decisions, tolerations and grace periods, and
	// of the failover ticker; nil: clock.Real.
	Clock clock.Clock
}

// Daemon is schedulerd.
type Daemon struct {
	cfg  Config
	deps Deps
	h    *Handler
}

// Consumer names.
const (
	PolicyConsumer = "schedulerd-policy"
	HealthConsumer = "schedulerd-health"
	// WorkConsumer reads executord's work statuses: application failover
	// and graceful eviction need each template's health per cluster.
	WorkConsumer = "schedulerd-work"
)

// Consumers are the durable consumers schedulerd binds, in the order Run
// binds them (its doc.go table lists what they carry): those of slot 0,
// a single instance's.
func Consumers(Config) []natsbus.ConsumerSpec { return slotConsumers(0) }

// EveryConsumer lists the consumers of every slot an instance may hold
// (natsbus.SlotConsumer), for credentials.
func EveryConsumer() []natsbus.ConsumerSpec { return natsbus.EverySlot(slotConsumers) }

// slotConsumers are the consumers of the instance holding slot: every
// instance reads every event into its state and decides only the
// templates of the partitions it holds.
func slotConsumers(slot int) []natsbus.ConsumerSpec {
	specs := []natsbus.ConsumerSpec{
		{Name: PolicyConsumer, Stream: events.StreamPolicy, Subjects: []string{events.AllBindings, events.AllMembers, events.AllQuotas}},
		{Name: HealthConsumer, Stream: events.StreamHealth, Subjects: []string{events.AllHealth, events.AllCapacity, events.HealthSnapshotSubject}},
		{Name: WorkConsumer, Stream: events.StreamWork, Subjects: []string{events.AllWork}},
	}
	for i := range specs {
		specs[i].Name = natsbus.SlotConsumer(specs[i].Name, slot)
		if slot > 0 {
			specs[i].InactiveThreshold = natsbus.SlotInactivity
		}
	}
	return specs
}

// Produces are the event types schedulerd publishes.
var Produces = []events.Type{events.TypePlacementDecided, events.TypePlacementRemoved, events.TypeWorkAssigned, events.TypeWorkUnassigned, events.TypeFailoverEvicted, events.TypeFailoverPurged}

// New wires schedulerd.
func New(cfg Config, deps Deps) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	deps.Log = deps.Log.Named("schedulerd")
	h := NewHandler(deps.Bus, cfg.Instance, core.New(plugins.DefaultProfile()), newMetrics(deps.Registry))
	h.SetEvictionLimit(cfg.Evictions)
	h.SetLogger(deps.Log)
	deps.Clock = clock.OrReal(deps.Clock)
	h.clock = deps.Clock
	return &Daemon{cfg: cfg, deps: deps, h: h}, nil
}

// Run rebuilds the state, then consumes policy and health events until ctx is done.
func (d *Daemon) Run(ctx context.Context) error {
	bus := d.deps.Bus
	if err := bus.EnsureStreams(ctx); err != nil {
		return err
	}
	in, err := bus.Join(ctx, natsbus.InstanceOptions{Daemon: "schedulerd", Instance: d.cfg.Instance, Version: d.cfg.Version, Partitions: d.cfg.Partitions, Lease: d.cfg.Lease,
		// A partition given up is released once the decisions made for it
		// are stored: its taker never decides again what this one did.
		Quiesce: func(ctx context.Context) {
			if d.h.settled(ctx) == nil {
				_ = bus.Flush(ctx)
			}
		}})
	if err != nil {
		return err
	}
	ledger, err := bus.OpenLedger(ctx, ledgerKeyTTL)
	if err != nil {
		return err
	}
	n := in.Partitions()
	d.h.SetLedger(ledger, in.Name(), LedgerPeers{Alone: func() bool { return in.Holds() == n }, Live: in.Live, Lease: in.Lease()})
	items := natsbus.PartitionItems(n)
	d.h.SetOwner(func(k events.ObjectKey) bool { return in.Owns(events.PartitionItem(events.Partition(k, n))) })
	// Consumers created now read on from what the rebuild reads.
	specs := slotConsumers(in.Slot())
	for i := range specs {
		st, err := bus.StreamState(ctx, specs[i].Stream)
		if err != nil {
			return err
		}
		specs[i].StartSequence = st.LastSeq + 1
	}
	if err := d.rebuild(ctx); err != nil {
		return err
	}
	if _, _, err := in.Balance(ctx, items); err != nil {
		return err
	}
	if err := d.assignMissing(ctx); err != nil {
		return err
	}
	if err := d.h.Reconcile(ctx, everyKey); err != nil {
		return err
	}
	var consumers []*natsbus.Consumer
	for _, spec := range specs {
		c, err := bus.Bind(ctx, spec)
		if err != nil {
			return err
		}
		consumers = append(consumers, c)
	}
	for i, spec := range specs {
		d.deps.Health.Add("consumer "+spec.Name, consumers[i].Ready)
	}
	d.deps.Log.Info("schedulerd ready", zap.String("instance", in.Name()), zap.Int("partitions", n), zap.Strings("owned", in.Owned()),
		zap.Int("members", len(d.h.members.byName)), zap.Int("bindings", len(d.h.book.bindings)))
	g, ctx := errgroup.WithContext(ctx)
	for _, c := range consumers {
		g.Go(func() error { return c.Run(ctx, d.h.Handle) })
	}
	g.Go(func() error { return d.tick(ctx) })
	g.Go(func() error { return d.shareReservations(ctx, ledger) })
	g.Go(func() error {
		return in.Run(ctx, func() []string { return items }, func(gained, lost []string) {
			if len(lost) > 0 {
				// Placed alone, without claims: shared before the taker acts.
				if err := d.h.FlushLedger(ctx, true); err != nil {
					d.deps.Log.Warn("capacity ledger", zap.Error(err))
				}
			}
			d.takeOver(ctx, gained, n)
		})
	})
	return g.Wait()
}

// takeOver catches up on the partitions just gained: their templates'
// last placements are read back (another instance made them) and what is
// left undone is decided. A failure is logged: the partition's bindings
// are decided anyway as their events arrive.
func (d *Daemon) takeOver(ctx context.Context, gained []string, n int) {
	if len(gained) == 0 {
		return
	}
	taken := func(k events.ObjectKey) bool {
		return slices.Contains(gained, events.PartitionItem(events.Partition(k, n)))
	}
	ms, err := d.deps.Bus.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements)
	if err != nil {
		// Decided from what this instance remembers: the bindings it left
		// unread must be read now, or they wait for their next revision.
		d.deps.Log.Warn("take over partitions: reading placements", zap.Strings("partitions", gained), zap.Error(err))
		ms = nil
	}
	var stored []events.PlacementDecision
	var removed []events.ObjectKey
	for _, m := range ms {
		var p events.PlacementDecision
		if m.Err != nil || events.Decode(m.Event, &p) != nil {
			continue
		}
		if events.Type(m.Event.Type()) == events.TypePlacementDecided {
			stored = append(stored, p)
		} else {
			removed = append(removed, p.Key)
		}
	}
	if err := d.h.TakeOver(ctx, stored, removed, taken); err != nil {
		d.deps.Log.Warn("take over partitions", zap.Strings("partitions", gained), zap.Error(err))
	}
}

// tick runs the failover clock: due tolerations, grace periods and
// deferred evictions. A failed publish is retried on the next tick.
func (d *Daemon) tick(ctx context.Context) error {
	return d.every(ctx, d.cfg.FailoverTick, "failover tick", d.h.Tick)
}

// every calls fn every period until ctx is done; a failure is logged as
// what, and fn runs again at the next period.
func (d *Daemon) every(ctx context.Context, period time.Duration, what string, fn func(context.Context) error) error {
	t := d.deps.Clock.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			d.deps.Log.Warn(what, zap.Error(err))
		}
	}
}

// shareReservations follows the ledger the instances share and writes this
// instance's changes that needed no claim (ledger.go). A failed watch is
// followed again a second later: meanwhile claims still hold, as every
// conflict reads the entry afresh.
func (d *Daemon) shareReservations(ctx context.Context, ledger *natsbus.Ledger) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		for ctx.Err() == nil {
			if err := ledger.Watch(ctx, d.h.LedgerSeen); err != nil && ctx.Err() == nil {
				d.deps.Log.Warn("capacity ledger watch", zap.Error(err))
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
		return nil
	})
	g.Go(func() error {
		return d.every(ctx, ledgerFlush, "capacity ledger", func(ctx context.Context) error { return d.h.FlushLedger(ctx, false) })
	})
	return g.Wait()
}

// recoverHistory owes the failover records the remembered placements imply
// and the stream lacks (a publish that failed just before a stop); the
// first tick sends them. It reads the failover history only when some
// placement carries an eviction.
func (d *Daemon) recoverHistory(ctx context.Context) error {
	evicted := false
	for _, p := range d.h.book.placements {
		if len(p.Evictions) > 0 {
			evicted = true
			break
		}
	}
	if !evicted {
		return nil
	}
	st, err := d.deps.Bus.StreamState(ctx, events.StreamPlacement)
	if err != nil {
		return fmt.Errorf("failover history: %w", err)
	}
	ms, err := d.deps.Bus.Replay(ctx, events.StreamPlacement, natsbus.ReplayOptions{Subjects: []string{events.AllFailover}})
	if err != nil {
		return fmt.Errorf("failover history: %w", err)
	}
	stored := make(map[string]bool, len(ms))
	for _, m := range ms {
		if m.Err == nil {
			stored[m.Event.ID()] = true
		}
	}
	// Records older than the stream's oldest message may have been dropped
	// by its limits, not lost by schedulerd: those are not sent again.
	var notBefore time.Time
	if st.FirstSeq > 1 {
		notBefore = st.FirstTime
	}
	if n := d.h.OweMissingHistory(stored, notBefore); n > 0 {
		d.deps.Log.Info("failover history records missing after a restart; sending them", zap.Int("records", n))
	}
	return nil
}

// rebuild reads back the latest members, bindings and placements, so a
// restarted schedulerd neither forgets nor repeats a decision.
func (d *Daemon) rebuild(ctx context.Context) error {
	bus, h := d.deps.Bus, d.h
	var errs []error
	read := func(stream string, filter string, fn func(natsbus.Message)) {
		ms, err := bus.LatestPerSubject(ctx, stream, filter)
		errs = append(errs, err)
		for _, m := range ms {
			if m.Err == nil {
				fn(m)
			}
		}
	}
	read(events.StreamPolicy, events.AllMembers, func(m natsbus.Message) {
		var r events.ClusterRegistration
		if events.Decode(m.Event, &r) != nil {
			return
		}
		switch events.Type(m.Event.Type()) {
		case events.TypeClusterRegistered:
			h.members.get(r.Name).reg = r
		case events.TypeClusterDeregistered:
			h.members.forget(r)
		}
	})
	read(events.StreamHealth, events.AllHealth, func(m natsbus.Message) {
		var c events.ClusterHealth
		if events.Decode(m.Event, &c) == nil {
			h.members.get(c.Cluster).health = &c
		}
	})
	read(events.StreamHealth, events.AllCapacity, func(m natsbus.Message) {
		var c events.ClusterCapacity
		if events.Decode(m.Event, &c) == nil {
			h.members.get(c.Cluster).capacity = &c
		}
	})
	read(events.StreamPolicy, events.AllBindings, func(m natsbus.Message) {
		if events.Type(m.Event.Type()) == events.TypeBindingRemoved {
			var b events.Binding
			if events.Decode(m.Event, &b) == nil {
				h.book.removed.Bury(b.Key.String(), b.Revision)
			}
			return
		}
		if events.Type(m.Event.Type()) != events.TypeBindingChanged {
			return
		}
		if b, err := h.book.specs.DecodeBinding(m.Event); err == nil {
			b.Reencode() // not deciding now: keep the fields only
			h.book.bindings[b.Key] = b
		}
	})
	read(events.StreamWork, events.AllWork, func(m natsbus.Message) {
		var st events.WorkStatus
		if events.Decode(m.Event, &st) == nil && st.Key.Kind != "" {
			h.recordWork(st, events.Type(m.Event.Type()) == events.TypeWorkDeleted)
		}
	})
	read(events.StreamPlacement, events.AllPlacements, func(m natsbus.Message) {
		var p events.PlacementDecision
		if events.Type(m.Event.Type()) == events.TypePlacementDecided && events.Decode(m.Event, &p) == nil {
			h.book.placements[p.Key] = remembered(p)
		}
	})
	h.restorePlaced()
	read(events.StreamPolicy, events.AllQuotas, func(m natsbus.Message) {
		if events.Type(m.Event.Type()) != events.TypeObjectAccepted {
			return
		}
		if q, err := quotaOf(m.Event); err == nil {
			h.placed.Quotas.SetQuota(q, nil)
		}
	})
	h.members.changed()
	// Every placed template's failover rules are looked at on the first tick.
	now := h.now()
	for k := range h.book.placements {
		h.queue.due[k] = now
	}
	errs = append(errs, d.recoverHistory(ctx))
	return errors.Join(errs...)
}

// assignMissing gives each cluster in Pull mode the assignments its
// stream subjects lack (Handler.AssignMissing): it turned to Pull while
// schedulerd was down, or the backfill of its turn was cut short. Only Pull
// clusters' assignments are read, so without any it reads nothing.
func (d *Daemon) assignMissing(ctx context.Context) error {
	for _, c := range d.h.PullClusters() {
		ms, err := d.deps.Bus.LatestPerSubject(ctx, events.StreamWork, events.AssignmentsOf(c))
		if err != nil {
			return fmt.Errorf("assignments of %s: %w", c, err)
		}
		stored := make(map[events.ObjectKey]events.PlacementDecision, len(ms))
		for _, m := range ms {
			var a events.PlacementDecision
			if m.Err == nil && events.Type(m.Event.Type()) == events.TypeWorkAssigned && events.Decode(m.Event, &a) == nil {
				stored[a.Key] = a
			}
		}
		n, err := d.h.AssignMissing(ctx, c, stored)
		if n > 0 {
			d.deps.Log.Info("assignments a Pull cluster lacked, published", zap.String("cluster", c), zap.Int("assignments", n))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
