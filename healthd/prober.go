package healthd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/internal/member"
)

// publishTimeout bounds one publish, so a NATS outage cannot hold up probing
// for long (the next snapshot repairs a transition that was not stored).
const publishTimeout = 10 * time.Second

// prober probes one cluster: one goroutine probes /readyz and applies the
// taint policy on every tick, another reads capacity, so a slow capacity
// read never delays a probe (the detection time depends on their cadence).
type prober struct {
	member.Task
	d   *Daemon
	reg events.ClusterRegistration
	log *zap.Logger
	// republish: the restored health was never stored as a transition
	// (Restored.Unstored); publish it before the first probe.
	republish bool

	mu      sync.Mutex
	tracker Tracker

	lastCap string // capacity goroutine only
}

func (p *prober) snapshot() Tracker {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tracker
}

// health is the cluster's current health, and whether it was ever observed.
func (p *prober) health() (events.ClusterHealth, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tracker.Health(p.reg.Name), p.tracker.Observed()
}

// Run probes the cluster while this instance holds its lease (Daemon.gate),
// first resuming from the health its last prober stored, until ctx is done.
func (p *prober) Run(ctx context.Context) {
	p.d.gate.Serve(ctx, p.reg.Name, func(ctx context.Context) {
		if p.d.gate != nil {
			p.resume(ctx)
		}
		p.run(ctx)
	})
}

// resume takes up the cluster's health where its last prober left it (an
// instance that held its lease meanwhile, or this one before it lost it):
// its last stored transition, if newer than what this tracker observed,
// so that the new prober continues its state, since and taints rather
// than publishing a conflicting transition.
func (p *prober) resume(ctx context.Context) {
	ms, err := p.d.deps.Bus.LatestPerSubject(ctx, events.StreamHealth, events.HealthSubject(p.reg.Name))
	if err != nil || len(ms) == 0 || ms[0].Err != nil {
		return
	}
	var h events.ClusterHealth
	if events.Decode(ms[0].Event, &h) != nil || h.Cluster != p.reg.Name {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur := p.tracker.Health(p.reg.Name); !p.tracker.Observed() || h.ObservedAt.After(cur.ObservedAt) {
		p.tracker = RestoreTracker(p.d.cfg.Thresholds(), p.d.taints.For(policy.FactsOf(p.reg.Name, p.reg.Labels, p.reg.Spec)), h)
		p.republish = false
	}
}

// run opens the credentials, then probes until ctx is done: with the
// member's kubeconfig (and reads capacity), or, without a usable one,
// anonymously at spec.apiEndpoint (no capacity). With neither the cluster
// is Unknown (NoCredentials) and not probed, but the taint policy is still
// applied on every tick, so a rule on Ready=Unknown with addAfterSeconds
// fires. It returns once its capacity reads have ended too.
func (p *prober) run(ctx context.Context) {
	if p.republish {
		p.publishHealth(ctx)
	}
	rc, err := member.RESTConfig(p.reg, p.d.key, 20, 40)
	var client kubernetes.Interface
	var readyz rest.Interface
	if err == nil {
		client, err = kubernetes.NewForConfig(rc)
	}
	if err == nil {
		readyz, err = probeClient(rc)
	}
	if err == nil {
		var capacity sync.WaitGroup
		defer capacity.Wait()
		capacity.Go(func() { p.readCapacity(ctx, client) })
		p.loop(ctx, func(ctx context.Context) ProbeResult { return p.fetchReadyz(ctx, readyz) })
		return
	}
	anon, aerr := newAnonymousProbe(p.reg.Spec, p.d.deps.RootCAs, err)
	if aerr == nil {
		p.log.Info("probing member anonymously", zap.String("url", anon.url), zap.NamedError("no_credentials", err))
		defer anon.client.CloseIdleConnections()
		p.loop(ctx, func(ctx context.Context) ProbeResult {
			r := anon.fetch(ctx, p.d.cfg.ProbeTimeout)
			p.countProbe(r)
			return r
		})
		return
	}
	message := err.Error()
	if !errors.Is(aerr, errNoEndpoint) {
		message += "; " + aerr.Error()
	}
	p.log.Warn("cannot probe member", zap.String("message", message))
	p.mu.Lock()
	changed := p.tracker.NoCredentials(message, p.d.now())
	p.mu.Unlock()
	if changed {
		p.publishHealth(ctx)
	}
	p.loop(ctx, nil)
}

// probeClient is a REST client for /readyz with no client-side rate
// limit: a probe must never wait behind capacity reads for a token.
func probeClient(rc *rest.Config) (rest.Interface, error) {
	c := rest.CopyConfig(rc)
	c.QPS, c.RateLimiter = -1, nil
	dc, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return nil, err
	}
	return dc.RESTClient(), nil
}

// loop runs step every ProbeInterval until ctx is done.
func (p *prober) loop(ctx context.Context, fetch func(context.Context) ProbeResult) {
	tick := p.d.deps.Clock.NewTicker(p.d.cfg.ProbeInterval)
	defer tick.Stop()
	for {
		if !p.step(ctx, fetch) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
	}
}

// step is one tick at the daemon's clock. It first applies the taint
// policy (so a NoExecute taint is added within one interval of its
// threshold, however long the probe then takes), then probes with fetch
// (nil: the cluster is not probed) and publishes a transition. It returns
// false when ctx ended it.
func (p *prober) step(ctx context.Context, fetch func(context.Context) ProbeResult) bool {
	now := p.d.now()
	p.mu.Lock()
	changed := p.tracker.Evaluate(now)
	p.mu.Unlock()
	if changed {
		p.publishHealth(ctx)
	}
	if fetch != nil {
		r := fetch(ctx)
		if ctx.Err() != nil {
			return false // a probe cut short by shutdown says nothing about the member
		}
		p.mu.Lock()
		changed = p.tracker.Observe(r, now)
		p.mu.Unlock()
		if changed {
			p.publishHealth(ctx)
		}
	}
	if !changed {
		h, _ := p.health()
		p.d.metrics.setHealth(h) // a restored cluster publishes nothing, but its gauges must be set
	}
	return ctx.Err() == nil
}

func (p *prober) countProbe(r ProbeResult) {
	result := "failed"
	switch {
	case r.OK:
		result = "ok"
	case r.Inconclusive != "":
		result = "inconclusive"
	}
	p.d.metrics.probes.WithLabelValues(p.reg.Name, result).Inc()
}

func (p *prober) fetchReadyz(ctx context.Context, readyz rest.Interface) ProbeResult {
	ctx, cancel := context.WithTimeout(ctx, p.d.cfg.ProbeTimeout)
	defer cancel()
	start := time.Now()
	body, err := readyz.Get().AbsPath("/readyz").DoRaw(ctx)
	r := ProbeResult{Latency: time.Since(start)}
	if err == nil {
		r.OK, r.Reachable = true, true
		p.countProbe(r)
		return r
	}
	var se *apierrors.StatusError
	r.Reachable = errors.As(err, &se)
	r.Message = strings.TrimSpace(fmt.Sprintf("/readyz: %v %s", err, truncate(string(body), 200)))
	p.countProbe(r)
	return r
}

func (p *prober) publishHealth(ctx context.Context) {
	h, _ := p.health()
	p.d.metrics.setHealth(h)
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	e, err := events.New(events.TypeClusterHealthChanged, p.d.source, p.reg.Name, h)
	if err == nil {
		err = p.d.deps.Bus.Publish(ctx, events.HealthSubject(p.reg.Name), e)
	}
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("publish health", zap.Error(err))
		}
		return
	}
	p.log.Info("cluster health changed", zap.String("state", h.State), zap.String("message", h.Message), zap.Int("taints", len(h.Taints)))
}

// readCapacity reports capacity every CapacityInterval while the cluster
// is Ready.
func (p *prober) readCapacity(ctx context.Context, client kubernetes.Interface) {
	tick := p.d.deps.Clock.NewTicker(p.d.cfg.CapacityInterval)
	defer tick.Stop()
	for {
		p.mu.Lock()
		ready := p.tracker.Ready()
		p.mu.Unlock()
		if ready {
			if err := p.reportCapacity(ctx, client); err != nil && ctx.Err() == nil {
				p.log.Info("capacity read failed", zap.Error(err))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		}
	}
}

func (p *prober) reportCapacity(ctx context.Context, client kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return err
	}
	alloc, used, total, ready := Summarize(nodes.Items, pods.Items)
	c := events.ClusterCapacity{Cluster: p.reg.Name, Nodes: total, ReadyNodes: ready, Allocatable: alloc, Allocated: used}
	if v, err := client.Discovery().ServerVersion(); err == nil {
		c.KubernetesVersion = v.GitVersion
	}
	if _, lists, err := client.Discovery().ServerGroupsAndResources(); err == nil || len(lists) > 0 {
		c.APIEnablements = apiEnablements(lists)
	}
	fp, _ := json.Marshal(c)
	if string(fp) == p.lastCap {
		return nil
	}
	c.ObservedAt = p.d.now().UTC()
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
