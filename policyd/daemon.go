package policyd

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/clock"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// Deps are what the daemon is wired to.
type Deps struct {
	Bus    *natsbus.Bus
	Log    *zap.Logger
	Health *observe.Health
	// Registry takes policyd's metrics; nil: not registered.
	Registry prometheus.Registerer
	// Clock stamps accepted and removed records; nil: clock.Real.
	Clock clock.Clock
}

// Daemon is policyd.
type Daemon struct {
	cfg  Config
	deps Deps
	h    *Handler
	// mu serialises the handler's input and the take-overs of partitions.
	mu sync.Mutex
	// own: what this instance knows of its partitions (under mu).
	own ownership
}

// ConsumerName is policyd's durable consumer on the input stream, slot 0's
// (a single instance's); an instance in slot k reads through
// `policyd-input-<k>` (natsbus.SlotConsumer).
const ConsumerName = "policyd-input"

// Consumers are the durable consumers policyd binds (its doc.go table
// lists what they carry): slot 0's.
func Consumers(Config) []natsbus.ConsumerSpec { return slotConsumers(0) }

// EveryConsumer lists the consumers of every slot an instance may hold,
// for credentials.
func EveryConsumer() []natsbus.ConsumerSpec { return natsbus.EverySlot(slotConsumers) }

// slotConsumers are the consumers of the instance holding slot: every
// instance reads every input (partitions.go).
func slotConsumers(slot int) []natsbus.ConsumerSpec {
	spec := natsbus.ConsumerSpec{Name: natsbus.SlotConsumer(ConsumerName, slot), Stream: events.StreamInput, Subjects: []string{events.AllInput}}
	if slot > 0 {
		spec.InactiveThreshold = natsbus.SlotInactivity
	}
	return []natsbus.ConsumerSpec{spec}
}

// Produces are the event types policyd publishes.
var Produces = []events.Type{
	events.TypeObjectAccepted, events.TypeObjectRemoved, events.TypeObjectRejected,
	events.TypeBindingChanged, events.TypeBindingRemoved,
	events.TypeClusterRegistered, events.TypeClusterDeregistered,
}

// New wires policyd.
func New(cfg Config, deps Deps) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := deps.Log.Named("policyd")
	deps.Log = log
	h := NewHandler(deps.Bus, cfg.Instance, log)
	h.maxReplicas = cfg.MaxReplicas
	h.clock, h.metrics = clock.OrReal(deps.Clock), newMetrics(deps.Registry)
	return &Daemon{cfg: cfg, deps: deps, h: h}, nil
}

// Run joins policyd's instances, rebuilds the state from the bus, then
// handles input until ctx is done, publishing for the partitions it holds.
func (d *Daemon) Run(ctx context.Context) error {
	bus := d.deps.Bus
	if err := bus.EnsureStreams(ctx); err != nil {
		return err
	}
	in, err := bus.Join(ctx, natsbus.InstanceOptions{Daemon: "policyd", Instance: d.cfg.Instance, Version: d.cfg.Version, Partitions: d.cfg.Partitions, Lease: d.cfg.Lease})
	if err != nil {
		return err
	}
	n := in.Partitions()
	items := natsbus.PartitionItems(n)
	d.wire(in, n)
	spec := slotConsumers(in.Slot())[0]
	peers, err := in.Peers(ctx)
	if err != nil {
		return err
	}
	// Alone in slot 0, the consumer resumes where this daemon stopped, and
	// what it published is all there is. Beside others, they handled
	// inputs meanwhile that this state lacks: the inputs are replayed.
	replay := in.Slot() > 0 || len(peers) > 0
	input, err := bus.StreamState(ctx, events.StreamInput)
	if err != nil {
		return err
	}
	if err := d.rebuild(ctx); err != nil {
		return fmt.Errorf("policyd rebuild: %w", err)
	}
	d.sameStream(input)
	// With an interpreter customization the rebuild kept every template.
	d.own.everyTemplate = len(d.h.st.interpreters) > 0
	if replay {
		d.h.replayThrough = input.LastSeq
		if err := bus.DropConsumer(ctx, spec.Stream, spec.Name); err != nil {
			return err
		}
	}
	if _, _, err := in.Balance(ctx, items); err != nil {
		return err
	}
	// The rebuild read every partition's templates: those held are loaded.
	for _, item := range in.Owned() {
		d.own.loaded[item] = true
	}
	d.h.Forget(func(k events.ObjectKey) bool { return !d.h.mine(k) })
	c, err := bus.Bind(ctx, spec)
	if err != nil {
		return err
	}
	d.deps.Health.Add("consumer "+spec.Name, c.Ready)
	d.deps.Log.Info("policyd ready", zap.String("instance", in.Name()), zap.Int("partitions", n), zap.Strings("owned", in.Owned()),
		zap.Bool("replaying", replay), zap.Int("objects", len(d.h.st.records)), zap.Int("bindings", len(d.h.st.bindings)))
	g, ctx := errgroup.WithContext(ctx)
	load := make(chan struct{}, 1)
	g.Go(func() error {
		return c.Run(ctx, func(ctx context.Context, e events.Event) error { return d.handleInput(ctx, e, in, n) })
	})
	g.Go(func() error {
		return in.Run(ctx, func() []string { return items }, func(gained, lost []string) {
			d.moved(gained, lost, n)
			select {
			case load <- struct{}{}:
			default:
			}
		})
	})
	g.Go(func() error {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			d.takeOver(ctx, in, n)
			d.loadEveryTemplate(ctx)
			select {
			case <-ctx.Done():
				return nil
			case <-load:
			case <-t.C:
			}
		}
	})
	return g.Wait()
}

// sameStream forgets the input sequences records carry beyond the input
// stream's last: the stream was made afresh since (its sequences began
// again), so they say nothing about its inputs (state.superseded).
func (d *Daemon) sameStream(input natsbus.StreamState) {
	for k, seq := range d.h.st.inputs {
		if seq > input.LastSeq {
			delete(d.h.st.inputs, k)
		}
	}
}

// readRegistrations reads the latest registration or deregistration of
// every cluster, by name.
func readRegistrations(ctx context.Context, bus *natsbus.Bus) (map[string]events.ClusterRegistration, error) {
	ms, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllMembers)
	out := make(map[string]events.ClusterRegistration, len(ms))
	for _, m := range ms {
		var r events.ClusterRegistration
		if m.Err == nil && events.Decode(m.Event, &r) == nil {
			out[r.Name] = r
		}
	}
	return out, err
}

// rebuild reads back what policyd has published: accepted objects (a
// claimed template's from its binding), bindings and registrations.
func (d *Daemon) rebuild(ctx context.Context) error {
	st := d.h.st
	p, err := readPublished(ctx, d.deps.Bus)
	if err != nil {
		return err
	}
	for _, rec := range p.Records {
		_ = st.put(rec)
	}
	// A template deleted, then applied again, has both a removal and a
	// record: the later input is the larger sequence.
	for k, seq := range p.removed {
		st.inputs[k] = max(st.inputs[k], seq)
	}
	st.bindings, st.bindingLive, st.bindingCause = p.Bindings, p.Live, p.Causes
	for k, live := range p.Live {
		if live && p.ClaimLapse(k) != "" {
			st.lapsed[k] = true
		}
	}
	regs, err := d.deps.Bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllMembers)
	if err != nil {
		return err
	}
	for _, m := range regs {
		var r events.ClusterRegistration
		if m.Err != nil || events.Decode(m.Event, &r) != nil {
			continue
		}
		switch events.Type(m.Event.Type()) {
		case events.TypeClusterRegistered:
			st.registrations[r.Name] = r
		case events.TypeClusterDeregistered:
			st.deregistered[r.Name] = r.Generation
		}
	}
	return nil
}
