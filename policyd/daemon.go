package policyd

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

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
}

// ConsumerName is policyd's durable consumer on the input stream. Several
// policyd instances bound to it would split the input; see DESIGN.md for why
// policyd runs as one active instance.
const ConsumerName = "policyd-input"

// Consumers are the durable consumers policyd binds (its doc.go table
// lists what they carry).
func Consumers(Config) []natsbus.ConsumerSpec {
	return []natsbus.ConsumerSpec{{Name: ConsumerName, Stream: events.StreamInput, Subjects: []string{events.AllInput}}}
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

// Run rebuilds the state from the bus, then handles input until ctx is done.
func (d *Daemon) Run(ctx context.Context) error {
	if err := d.deps.Bus.EnsureStreams(ctx); err != nil {
		return err
	}
	if err := d.rebuild(ctx); err != nil {
		return fmt.Errorf("policyd rebuild: %w", err)
	}
	c, err := d.deps.Bus.Bind(ctx, Consumers(d.cfg)[0])
	if err != nil {
		return err
	}
	d.deps.Health.Add("consumer "+ConsumerName, c.Ready)
	d.deps.Log.Info("policyd ready", zap.Int("objects", len(d.h.st.records)), zap.Int("bindings", len(d.h.st.bindings)))
	return c.Run(ctx, d.h.Handle)
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
