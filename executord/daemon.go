package executord

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"

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
	// PullConfig is the pull-mode cluster's credentials (from --kubeconfig or in-cluster).
	PullConfig *rest.Config
	// Clock is the time source of statuses (UnhealthySince, timestamps),
	// of held operations' backoff and of the resync ticker; nil: clock.Real.
	Clock clock.Clock
}

// Daemon is executord.
type Daemon struct {
	cfg     Config
	deps    Deps
	key     *sealing.Key
	metrics *metrics
	source  string

	mu      sync.Mutex
	workers map[string]*worker // run by members
	members member.Supervisor[*worker]
	in      *natsbus.Instance              // push mode: this instance's leases
	work    map[string][]events.WorkStatus // rebuilt work records by cluster
	// gate lets a push-mode worker act only while this instance holds its
	// cluster's lease (nil in pull mode: the one cluster is its own).
	gate *member.Gate

	// badPaths are the statePreservation jsonPaths already logged as not
	// parsing (every status publication meets them again).
	badPaths sync.Map
}

// MembersConsumer follows registrations in push mode.
const MembersConsumer = "executord-members"

// New wires executord.
func New(cfg Config, deps Deps) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Daemon{cfg: cfg, deps: deps, metrics: newMetrics(deps.Registry), source: "/executord/" + cfg.Instance,
		workers: map[string]*worker{}, work: map[string][]events.WorkStatus{}}
	d.deps.Log = deps.Log.Named("executord")
	d.deps.Clock = clock.OrReal(deps.Clock)
	if cfg.PullMode() && deps.PullConfig == nil {
		return nil, fmt.Errorf("pull mode for cluster %s needs credentials (--kubeconfig or in-cluster)", cfg.Cluster)
	}
	if !cfg.PullMode() {
		key, err := sealing.LoadOrCreate(cfg.CredentialsKey)
		if err != nil {
			return nil, err
		}
		d.key = key
	}
	return d, nil
}

func (d *Daemon) now() time.Time { return d.deps.Clock.Now() }

// logBadRule logs, once per path and daemon, a statePreservation rule
// whose jsonPath does not parse (its value is left out of work statuses).
func (d *Daemon) logBadRule(key events.ObjectKey, e *RuleError) {
	if _, logged := d.badPaths.LoadOrStore(e.Rule.JSONPath, true); logged {
		return
	}
	d.deps.Log.Warn("statePreservation jsonPath does not parse, its value is left out", zap.String("workload", key.String()),
		zap.String("alias", e.Rule.AliasLabelName), zap.String("json_path", e.Rule.JSONPath), zap.Error(e.Err))
}

// placementConsumer is the consumer that serves cluster its placements:
// in push mode every placement (the control plane reads them all), in pull
// mode only the cluster's assignments, which is all a credential issued
// with --cluster may read (DESIGN.md decision 23).
func placementConsumer(cfg Config, cluster string) natsbus.ConsumerSpec {
	stream, filter := placementSource(cfg, cluster)
	// Applying to a member is the slowest handling there is (API round
	// trips under the client's QPS limit): a longer deadline than the default.
	return natsbus.ConsumerSpec{Name: ConsumerFor(cluster), Stream: stream, Subjects: []string{filter}, StartLastPerSubject: true,
		Deadline: 2 * time.Minute}
}

// placementSource is the stream and filter cluster's placements are read
// from (placementConsumer).
func placementSource(cfg Config, cluster string) (stream, filter string) {
	if cfg.PullMode() {
		return events.StreamWork, events.AssignmentsOf(cluster)
	}
	return events.StreamPlacement, events.AllPlacements
}

// ReaderFor names the one consumer a pull-mode executord of cluster reads
// the streams with (natsbus.Options.Reader): a credential issued with
// --cluster may create, read and delete no other (DESIGN.md decision 23).
func ReaderFor(cluster string) string { return ConsumerFor(cluster) + "-read" }

// membersConsumer follows registrations in push mode for the instance
// holding slot: every instance reads every registration (it keeps a
// worker, gated, for every cluster), so each has its own
// (natsbus.SlotConsumer).
func membersConsumer(slot int) natsbus.ConsumerSpec {
	c := natsbus.ConsumerSpec{Name: natsbus.SlotConsumer(MembersConsumer, slot), Stream: events.StreamPolicy, Subjects: []string{events.AllMembers}}
	if slot > 0 {
		c.InactiveThreshold = natsbus.SlotInactivity
	}
	return c
}

// Consumers are the durable consumers executord binds to serve cluster:
// its placement consumer (one per cluster, bound by the instance owning
// the cluster) and, in push mode, the registrations' of slot 0, a single
// instance's (its doc.go table lists what they carry).
func Consumers(cfg Config, cluster string) []natsbus.ConsumerSpec {
	return slotConsumers(cfg, cluster, 1)
}

// EveryConsumer is Consumers with the registrations' consumer of every
// slot an instance may hold (natsbus.SlotConsumer), for credentials.
func EveryConsumer(cfg Config, cluster string) []natsbus.ConsumerSpec {
	return slotConsumers(cfg, cluster, natsbus.MaxInstances)
}

func slotConsumers(cfg Config, cluster string, slots int) []natsbus.ConsumerSpec {
	out := []natsbus.ConsumerSpec{placementConsumer(cfg, cluster)}
	if !cfg.PullMode() {
		for slot := range slots {
			out = append(out, membersConsumer(slot))
		}
	}
	return out
}

// Produces are the event types executord publishes.
var Produces = []events.Type{events.TypeWorkStatusChanged, events.TypeWorkDeleted, events.TypeSealKeyPublished}

// Run serves the member clusters until ctx is done.
func (d *Daemon) Run(ctx context.Context) error {
	bus := d.deps.Bus
	workFilter := events.AllWork
	if d.cfg.PullMode() {
		// A member's executord neither creates nor changes the streams (a
		// credential issued with --cluster may not): the control plane does.
		workFilter = events.WorkOf(d.cfg.Cluster)
	} else if err := bus.EnsureStreams(ctx); err != nil {
		return err
	}
	work, err := bus.LatestPerSubject(ctx, events.StreamWork, workFilter)
	if err != nil {
		return err
	}
	for _, m := range work {
		var s events.WorkStatus
		if m.Err == nil && events.Decode(m.Event, &s) == nil {
			d.work[s.Cluster] = append(d.work[s.Cluster], s)
		}
	}
	d.deps.Health.Add("executord cluster consumers", d.workersReady)
	defer d.stopAll()
	if d.cfg.PullMode() {
		w, err := newWorker(d, d.cfg.Cluster, events.ClusterRegistration{Name: d.cfg.Cluster}, d.deps.PullConfig)
		if err != nil {
			return err
		}
		d.mu.Lock()
		d.start(ctx, w, 0)
		d.mu.Unlock()
		d.deps.Log.Info("executord ready (pull mode)", zap.String("cluster", d.cfg.Cluster))
		<-ctx.Done()
		return nil
	}
	if err := sealing.Announce(ctx, bus, d.key, d.source); err != nil {
		return err
	}
	in, err := bus.Join(ctx, natsbus.InstanceOptions{Daemon: "executord", Instance: d.cfg.Instance, Version: d.cfg.Version, Partitions: d.cfg.Partitions, Lease: d.cfg.Lease})
	if err != nil {
		return err
	}
	d.in = in
	d.gate = member.NewGate(in.Owns, max(in.Lease()/10, 20*time.Millisecond))
	if err := bus.HandleLatest(ctx, events.StreamPolicy, d.HandleMember, events.AllMembers); err != nil {
		return err
	}
	if _, _, err := in.Balance(ctx, d.clusters()); err != nil {
		return err
	}
	d.gate.Moved()
	c, err := bus.Bind(ctx, membersConsumer(in.Slot()))
	if err != nil {
		return err
	}
	d.deps.Log.Info("executord ready (push mode)", zap.String("instance", in.Name()), zap.Int("clusters", len(d.workers)), zap.Strings("owned", in.Owned()))
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.Run(ctx, d.HandleMember) })
	g.Go(func() error { return in.Run(ctx, d.clusters, func(_, _ []string) { d.gate.Moved() }) })
	return g.Wait()
}

// clusters are the work items push-mode instances share, one lease each:
// the clusters this instance keeps a worker for (registered, push mode,
// with credentials).
func (d *Daemon) clusters() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Sorted(maps.Keys(d.workers))
}

// workersReady fails while any served cluster's consumer is not pulling
// (a standby's workers, gated, serve none).
func (d *Daemon) workersReady() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for name, w := range d.workers {
		if !d.gate.Owns(name) {
			continue
		}
		if err := w.consumer.Load().Ready(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func snapshotWork(w *worker) []events.WorkStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]events.WorkStatus, 0, len(w.work))
	for _, s := range w.work {
		out = append(out, s)
	}
	return out
}

// start runs w, which takes over the work records its cluster's previous
// worker (or the rebuild) left. Called with d.mu held.
func (d *Daemon) start(ctx context.Context, w *worker, gen int64) {
	for _, s := range d.work[w.name] {
		w.work[s.Key] = s
	}
	d.members.Start(ctx, d.workers, w.name, gen, w)
}

// retire takes over what a stopped worker had applied or was removing:
// should the cluster join again, its next worker finishes those removals
// (a copy left behind when the cluster left otherwise stayed on the
// member, shown as Deleting, for good). Called with d.mu held.
func (d *Daemon) retire(w *worker) {
	d.work[w.name] = snapshotWork(w)
	d.metrics.forget(w.name)
}

// stopAll stops every worker and waits for them, at shutdown.
func (d *Daemon) stopAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.members.StopAll(d.workers)
	for name := range d.workers {
		d.metrics.forget(name)
	}
}
