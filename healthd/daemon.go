package healthd

import (
	"context"
	"crypto/x509"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/internal/clock"
	"github.com/flotilla-io/flotilla/internal/member"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// Deps are what the daemon is wired to.
type Deps struct {
	Bus      *natsbus.Bus
	Log      *zap.Logger
	Health   *observe.Health
	Registry prometheus.Registerer
	// Clock is the time the state machine and the taint policy run on
	// (when a probe was sent, since, timeAdded, snapshots' takenAt), and
	// the tickers of probes, capacity reads and snapshots. nil: clock.Real.
	// Probe latencies are measured on the real clock.
	Clock clock.Clock
	// RootCAs verify the API servers healthd probes anonymously (members it
	// holds no kubeconfig for). nil: the system's roots, which on Linux
	// SSL_CERT_FILE and SSL_CERT_DIR extend.
	RootCAs *x509.CertPool
}

// Daemon is healthd.
type Daemon struct {
	cfg     Config
	deps    Deps
	key     *sealing.Key
	metrics *metrics
	source  string
	taints  TaintPolicy // every rule; each cluster's Tracker gets those that target it

	mu         sync.Mutex
	probers    map[string]*prober // run by members
	members    member.Supervisor[*prober]
	lastHealth map[string]Restored // published before a restart, until the cluster's prober starts
	// in and gate: several instances share the members, a lease per
	// cluster; a prober probes only while its instance holds the lease.
	in   *natsbus.Instance
	gate *member.Gate
}

// ConsumerName is healthd's durable consumer of registrations (slot 0's).
const ConsumerName = "healthd-members"

// Consumers are the durable consumers a single healthd binds, slot 0's
// (its doc.go table lists what they carry).
func Consumers(Config) []natsbus.ConsumerSpec { return []natsbus.ConsumerSpec{membersConsumer(0)} }

// EveryConsumer lists the consumers of every slot an instance may hold
// (natsbus.SlotConsumer), for credentials.
func EveryConsumer() []natsbus.ConsumerSpec {
	return natsbus.EverySlot(func(slot int) []natsbus.ConsumerSpec { return []natsbus.ConsumerSpec{membersConsumer(slot)} })
}

// membersConsumer follows registrations for the instance holding slot:
// every instance reads every registration (it keeps a prober, gated, for
// every cluster), so each has its own.
func membersConsumer(slot int) natsbus.ConsumerSpec {
	c := natsbus.ConsumerSpec{Name: natsbus.SlotConsumer(ConsumerName, slot), Stream: events.StreamPolicy, Subjects: []string{events.AllMembers}}
	if slot > 0 {
		c.InactiveThreshold = natsbus.SlotInactivity
	}
	return c
}

// Produces are the event types healthd publishes.
var Produces = []events.Type{events.TypeClusterHealthChanged, events.TypeClusterHealthSnapshot, events.TypeClusterCapacityReported, events.TypeSealKeyPublished}

// New wires healthd.
func New(cfg Config, deps Deps) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key, err := sealing.LoadOrCreate(cfg.CredentialsKey)
	if err != nil {
		return nil, err
	}
	taints := cfg.TaintPolicy()
	if cfg.TaintPolicyFile != "" {
		if taints.Rules, err = LoadTaintPolicies(cfg.TaintPolicyFile); err != nil {
			return nil, err
		}
	}
	deps.Log = deps.Log.Named("healthd")
	deps.Clock = clock.OrReal(deps.Clock)
	return &Daemon{cfg: cfg, deps: deps, key: key, taints: taints, metrics: newMetrics(deps.Registry), source: "/healthd/" + cfg.Instance, probers: map[string]*prober{}}, nil
}

// Run announces the credentials key, starts a prober per registered
// cluster, publishes snapshots and follows registrations until ctx is done.
func (d *Daemon) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		d.mu.Lock()
		d.members.StopAll(d.probers)
		d.mu.Unlock()
	}()
	bus := d.deps.Bus
	if err := bus.EnsureStreams(ctx); err != nil {
		return err
	}
	if err := sealing.Announce(ctx, bus, d.key, d.source); err != nil {
		return err
	}
	if err := d.readLastHealth(ctx); err != nil {
		return err
	}
	in, err := bus.Join(ctx, natsbus.InstanceOptions{Daemon: "healthd", Instance: d.cfg.Instance, Version: d.cfg.Version, Partitions: d.cfg.Partitions, Lease: d.cfg.Lease})
	if err != nil {
		return err
	}
	d.in, d.gate = in, member.NewGate(in.Owns, max(in.Lease()/10, 20*time.Millisecond))
	if err := bus.HandleLatest(ctx, events.StreamPolicy, d.HandleMember, events.AllMembers); err != nil {
		return err
	}
	if _, _, err := in.Balance(ctx, d.clusters()); err != nil {
		return err
	}
	d.gate.Moved()
	spec := membersConsumer(in.Slot())
	c, err := bus.Bind(ctx, spec)
	if err != nil {
		return err
	}
	d.deps.Health.Add("consumer "+spec.Name, c.Ready)
	wg.Go(func() { d.publishSnapshots(ctx) })
	d.deps.Log.Info("healthd ready", zap.String("instance", in.Name()), zap.Int("members", len(d.probers)), zap.Strings("owned", in.Owned()),
		zap.Duration("probe_interval", d.cfg.ProbeInterval), zap.Duration("detection", d.cfg.Detection()), zap.Duration("no_execute_after", d.cfg.NoExecuteAfter),
		zap.String("taint_policy", d.cfg.TaintPolicyFile), zap.Int("taint_rules", len(d.taints.Rules)))
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.Run(ctx, d.HandleMember) })
	g.Go(func() error { return in.Run(ctx, d.clusters, func(_, _ []string) { d.gate.Moved() }) })
	return g.Wait()
}

// clusters are the work items healthd instances share, one lease each:
// the registered clusters.
func (d *Daemon) clusters() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Sorted(maps.Keys(d.probers))
}

func (d *Daemon) now() time.Time { return d.deps.Clock.Now() }

// readLastHealth reads what an earlier run published for every cluster,
// its last transition and the last snapshot, for RestoreTracker.
func (d *Daemon) readLastHealth(ctx context.Context) error {
	ms, err := d.deps.Bus.LatestPerSubject(ctx, events.StreamHealth, events.AllHealth, events.HealthSnapshotSubject)
	if err != nil {
		return err
	}
	var transitions []Transition
	var snap *events.HealthSnapshot
	for _, m := range ms {
		if m.Err != nil {
			continue
		}
		switch events.Type(m.Event.Type()) {
		case events.TypeClusterHealthChanged:
			var h events.ClusterHealth
			if events.Decode(m.Event, &h) == nil && h.Cluster != "" {
				transitions = append(transitions, Transition{Health: h, PublishedAt: m.Event.Time()})
			}
		case events.TypeClusterHealthSnapshot:
			var s events.HealthSnapshot
			if events.Decode(m.Event, &s) == nil {
				snap = &s
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lastHealth = LastHealth(transitions, snap)
	return nil
}
