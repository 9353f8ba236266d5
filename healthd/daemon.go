package healthd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/internal/member"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// Deps are what the daemon is wired to.
type Deps struct {
	Bus      *natsbus.Bus
	Log      *zap.Logger
	Health   *observe.Health
	Registry prometheus.Registerer
}

// Daemon is healthd.
type Daemon struct {
	cfg     Config
	deps    Deps
	key     *sealing.Key
	metrics *metrics
	source  string

	mu      sync.Mutex
	probers map[string]*prober
	ctx     context.Context
}

// ConsumerName is healthd's durable consumer of registrations.
const ConsumerName = "healthd-members"

// New wires healthd.
func New(cfg Config, deps Deps) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key, err := sealing.LoadOrCreate(cfg.CredentialsKey)
	if err != nil {
		return nil, err
	}
	deps.Log = deps.Log.Named("healthd")
	return &Daemon{cfg: cfg, deps: deps, key: key, metrics: newMetrics(deps.Registry), source: "/healthd/" + cfg.Instance, probers: map[string]*prober{}}, nil
}

// Run announces the credentials key, starts a prober per registered
// cluster and follows registrations until ctx is done.
func (d *Daemon) Run(ctx context.Context) error {
	d.ctx = ctx
	bus := d.deps.Bus
	if err := bus.EnsureStreams(ctx); err != nil {
		return err
	}
	if err := sealing.Announce(ctx, bus, d.key, d.source); err != nil {
		return err
	}
	if err := bus.HandleLatest(ctx, events.StreamPolicy, d.Handle, events.AllMembers); err != nil {
		return err
	}
	c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: ConsumerName, Stream: events.StreamPolicy, Subjects: []string{events.AllMembers}})
	if err != nil {
		return err
	}
	d.deps.Health.Add("consumer "+ConsumerName, c.Ready)
	d.deps.Log.Info("healthd ready", zap.Int("members", len(d.probers)), zap.Duration("probe_interval", d.cfg.ProbeInterval))
	err = c.Run(ctx, d.Handle)
	d.mu.Lock()
	for _, p := range d.probers {
		p.stop()
	}
	d.mu.Unlock()
	return err
}

// Handle follows registrations: a new or changed cluster gets a fresh prober.
func (d *Daemon) Handle(ctx context.Context, e events.Event) error {
	var r events.ClusterRegistration
	if err := events.Decode(e, &r); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, ok := d.probers[r.Name]
	switch events.Type(e.Type()) {
	case events.TypeClusterDeregistered:
		if ok {
			old.stop()
			delete(d.probers, r.Name)
		}
		return nil
	case events.TypeClusterRegistered:
	default:
		return events.Permanent(fmt.Errorf("healthd does not handle %q", e.Type()))
	}
	if ok && old.reg.Generation >= r.Generation {
		return nil
	}
	var tracker Tracker
	if ok {
		old.stop()
		tracker = old.snapshot()
	}
	p := &prober{d: d, reg: r, tracker: tracker, log: d.deps.Log.With(zap.String("cluster", r.Name))}
	d.probers[r.Name] = p
	p.start(d.ctx)
	return nil
}

// prober probes one cluster.
type prober struct {
	d       *Daemon
	reg     events.ClusterRegistration
	log     *zap.Logger
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	tracker Tracker
	lastCap string
	client  kubernetes.Interface
}

func (p *prober) snapshot() Tracker {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tracker
}

func (p *prober) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	p.cancel, p.done = cancel, make(chan struct{})
	go func() {
		defer close(p.done)
		p.loop(ctx)
	}()
}

func (p *prober) stop() {
	p.cancel()
	<-p.done
}

func (p *prober) loop(ctx context.Context) {
	cfg := p.d.cfg
	rc, err := member.RESTConfig(p.reg, p.d.key, 20, 40)
	if err == nil {
		p.client, err = kubernetes.NewForConfig(rc)
	}
	if err != nil {
		p.log.Warn("cannot probe member", zap.Error(err))
		p.publishHealth(ctx, ProbeResult{Message: err.Error()}, true)
		return
	}
	probeTick := time.NewTicker(cfg.ProbeInterval)
	defer probeTick.Stop()
	var lastCapacity time.Time
	for {
		r := p.probe(ctx)
		p.mu.Lock()
		changed := p.tracker.Observe(r, time.Now(), cfg.FailureThreshold, cfg.SuccessThreshold)
		ready := p.tracker.Ready()
		p.mu.Unlock()
		if changed {
			p.publishHealth(ctx, r, false)
		}
		if ready && time.Since(lastCapacity) >= cfg.CapacityInterval {
			lastCapacity = time.Now()
			if err := p.reportCapacity(ctx); err != nil && ctx.Err() == nil {
				p.log.Info("capacity read failed", zap.Error(err))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-probeTick.C:
		}
	}
}

func (p *prober) probe(ctx context.Context) ProbeResult {
	ctx, cancel := context.WithTimeout(ctx, p.d.cfg.ProbeTimeout)
	defer cancel()
	start := time.Now()
	body, err := p.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	r := ProbeResult{Latency: time.Since(start)}
	switch {
	case err == nil:
		r.OK, r.Reachable = true, true
		p.d.metrics.probes.WithLabelValues(p.reg.Name, "ok").Inc()
	default:
		var se *apierrors.StatusError
		r.Reachable = errors.As(err, &se)
		r.Message = fmt.Sprintf("/readyz: %v %s", err, truncate(string(body), 200))
		p.d.metrics.probes.WithLabelValues(p.reg.Name, "failed").Inc()
	}
	return r
}

func (p *prober) publishHealth(ctx context.Context, r ProbeResult, noCredentials bool) {
	p.mu.Lock()
	t := p.tracker
	p.mu.Unlock()
	now := time.Now().UTC()
	h := events.ClusterHealth{Cluster: p.reg.Name, Ready: t.Ready(), State: t.State, Message: t.Message, Since: t.Since, ObservedAt: now, LastProbeMs: r.Latency.Milliseconds()}
	if noCredentials {
		h.State, h.Reason, h.Message, h.Since = StateUnknown, "NoCredentials", r.Message, now
	}
	if h.State == "" {
		h.State = StateUnknown
	}
	h.Taints = t.Taints(now)
	status, reason := "False", "ClusterNotReady"
	switch {
	case h.Ready:
		status, reason = "True", "ClusterReady"
	case h.State == StateUnreachable || h.State == StateUnknown:
		status, reason = "Unknown", "ClusterUnreachable"
	}
	if h.Reason == "" {
		h.Reason = reason
	}
	h.Conditions = []events.ClusterCondition{{Type: policy.ClusterConditionReady, Status: status, Reason: h.Reason, Message: h.Message, LastTransitionTime: h.Since}}
	ready := 0.0
	if h.Ready {
		ready = 1
	}
	p.d.metrics.ready.WithLabelValues(p.reg.Name).Set(ready)
	e, err := events.New(events.TypeClusterHealthChanged, p.d.source, p.reg.Name, h)
	if err == nil {
		err = p.d.deps.Bus.Publish(ctx, events.HealthSubject(p.reg.Name), e)
	}
	if err != nil {
		p.log.Warn("publish health", zap.Error(err))
		return
	}
	p.log.Info("cluster health changed", zap.String("state", h.State), zap.String("message", h.Message))
}

func (p *prober) reportCapacity(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nodes, err := p.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := p.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return err
	}
	alloc, used, total, ready := Summarize(nodes.Items, pods.Items)
	c := events.ClusterCapacity{Cluster: p.reg.Name, Nodes: total, ReadyNodes: ready, Allocatable: alloc, Allocated: used}
	if v, err := p.client.Discovery().ServerVersion(); err == nil {
		c.KubernetesVersion = v.GitVersion
	}
	if _, lists, err := p.client.Discovery().ServerGroupsAndResources(); err == nil || len(lists) > 0 {
		c.APIEnablements = apiEnablements(lists)
	}
	fp, _ := json.Marshal(c)
	if string(fp) == p.lastCap {
		return nil
	}
	c.ObservedAt = time.Now().UTC()
	e, err := events.New(events.TypeClusterCapacityReported, p.d.source, p.reg.Name, c)
	if err != nil {
		return err
	}
	if err := p.d.deps.Bus.Publish(ctx, events.CapacitySubject(p.reg.Name), e); err != nil {
		return err
	}
	p.lastCap = string(fp)
	return nil
}

func apiEnablements(lists []*metav1.APIResourceList) []policy.APIEnablement {
	out := make([]policy.APIEnablement, 0, len(lists))
	for _, l := range lists {
		en := policy.APIEnablement{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			en.Resources = append(en.Resources, policy.APIResource{Name: r.Name, Kind: r.Kind})
		}
		sort.Slice(en.Resources, func(i, j int) bool { return en.Resources[i].Name < en.Resources[j].Name })
		out = append(out, en)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupVersion < out[j].GroupVersion })
	return out
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

var _ = corev1.ResourceCPU
