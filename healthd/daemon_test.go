package healthd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/observe/observetest"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// fakeMember stands in for a member's API server: /readyz answers 200, or 500
// once failing is set; Close makes it unreachable.
type fakeMember struct {
	*httptest.Server
	failing atomic.Bool
}

func newMember(t *testing.T) *fakeMember { return startMember(t, false) }

// newTLSMember is newMember over TLS, with httptest's certificate.
func newTLSMember(t *testing.T) *fakeMember { return startMember(t, true) }

func startMember(t *testing.T, overTLS bool) *fakeMember {
	m := &fakeMember{}
	m.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/readyz":
			http.NotFound(w, r)
		case m.failing.Load():
			http.Error(w, "[-]etcd failed", http.StatusInternalServerError)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	m.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes the probe refuses are expected
	if overTLS {
		m.StartTLS()
	} else {
		m.Start()
	}
	t.Cleanup(m.Close)
	return m
}

// register publishes name's registration with a kubeconfig for server,
// sealed to key, as policyd would.
func register(t *testing.T, bus *natsbus.Bus, key *sealing.Key, name, server string) {
	t.Helper()
	e, err := events.New(events.TypeClusterRegistered, "/test", name, eventstest.SealedRegistration(t, key, name, server, 1))
	if err == nil {
		err = bus.Publish(context.Background(), events.MemberSubject(name), e)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// stream collects what lands on FLOTILLA_HEALTH.
type stream struct {
	mu   sync.Mutex
	seen []natsbus.Message
}

func (s *stream) add(m natsbus.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, m)
}

// await waits for an event of type typ whose payload satisfies ok.
func await[T any](t *testing.T, s *stream, typ events.Type, what string, ok func(T) bool) T {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		seen := append([]natsbus.Message(nil), s.seen...)
		s.mu.Unlock()
		for _, m := range seen {
			var v T
			if m.Err != nil || m.Event.Type() != string(typ) || events.Decode(m.Event, &v) != nil {
				continue
			}
			if ok(v) {
				return v
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no %s on the bus: %s", typ, what)
	var zero T
	return zero
}

func hasTaint(h events.ClusterHealth, key string, effect corev1.TaintEffect) bool {
	for _, t := range h.Taints {
		if t.Key == key && t.Effect == effect && t.TimeAdded != nil {
			return true
		}
	}
	return false
}

func TestDaemonPublishesSnapshotsAndTheLossOfAMember(t *testing.T) {
	_, bus := eventstest.Server(t)
	keyPath := filepath.Join(t.TempDir(), "credentials.key")
	key, err := sealing.LoadOrCreate(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	m := newMember(t)
	register(t, bus, key, "member1", m.URL)

	cfg := DefaultConfig()
	cfg.CredentialsKey = keyPath
	cfg.ProbeInterval, cfg.ProbeTimeout = 10*time.Millisecond, 200*time.Millisecond
	cfg.CapacityInterval = time.Hour
	cfg.SnapshotInterval = 50 * time.Millisecond
	cfg.NoExecuteAfter = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := start(t, cfg, bus, prometheus.NewRegistry())
	defer func() { stop() }()
	var s stream
	go func() {
		_ = bus.Watch(ctx, events.StreamHealth, []string{events.AllHealth, events.HealthSnapshotSubject}, false, s.add)
	}()

	await(t, &s, events.TypeClusterHealthChanged, "member1 Ready", func(h events.ClusterHealth) bool {
		return h.Cluster == "member1" && h.State == events.ClusterStateReady && h.FailingSince == nil && len(h.Taints) == 0
	})
	snap := await(t, &s, events.TypeClusterHealthSnapshot, "a snapshot with member1 Ready", func(hs events.HealthSnapshot) bool {
		return len(hs.Clusters) == 1 && hs.Clusters[0].Cluster == "member1" && hs.Clusters[0].State == events.ClusterStateReady
	})
	if snap.TakenAt.IsZero() || snap.Clusters[0].ObservedAt.After(snap.TakenAt) {
		t.Errorf("a snapshot's clusters are observed before it is taken: %+v", snap)
	}
	// Several probes and snapshots later, still one health event: only
	// transitions are published.
	await(t, &s, events.TypeClusterHealthSnapshot, "a later snapshot", func(hs events.HealthSnapshot) bool {
		return hs.TakenAt.After(snap.TakenAt.Add(50 * time.Millisecond))
	})
	if n := count(&s, events.TypeClusterHealthChanged); n != 1 {
		t.Errorf("a steadily Ready member must publish one health event, not one per probe; got %d", n)
	}

	m.failing.Store(true)
	notReady := await(t, &s, events.TypeClusterHealthChanged, "member1 NotReady", func(h events.ClusterHealth) bool {
		return h.State == events.ClusterStateNotReady
	})
	if notReady.FailingSince == nil || !notReady.FailingSince.Before(notReady.Since) || !hasTaint(notReady, policy.TaintClusterNotReady, corev1.TaintEffectNoSchedule) ||
		!strings.Contains(notReady.LastProbeError, "etcd failed") {
		t.Errorf("NotReady must carry FailingSince before Since, the not-ready NoSchedule taint and the probe error; got %+v", notReady)
	}

	m.Close()
	unreachable := await(t, &s, events.TypeClusterHealthChanged, "member1 Unreachable", func(h events.ClusterHealth) bool {
		return h.State == events.ClusterStateUnreachable
	})
	if unreachable.FailingSince == nil || !unreachable.FailingSince.Equal(*notReady.FailingSince) ||
		!hasTaint(unreachable, policy.TaintClusterUnreachable, corev1.TaintEffectNoSchedule) || hasTaint(unreachable, policy.TaintClusterNotReady, corev1.TaintEffectNoSchedule) {
		t.Errorf("Unreachable keeps FailingSince and swaps the taint key; got %+v", unreachable)
	}
	await(t, &s, events.TypeClusterHealthChanged, "member1 tainted NoExecute", func(h events.ClusterHealth) bool {
		return h.State == events.ClusterStateUnreachable && hasTaint(h, policy.TaintClusterUnreachable, corev1.TaintEffectNoExecute)
	})
	lost := await(t, &s, events.TypeClusterHealthSnapshot, "a snapshot with member1 Unreachable and NoExecute", func(hs events.HealthSnapshot) bool {
		return len(hs.Clusters) == 1 && hs.Clusters[0].State == events.ClusterStateUnreachable && hasTaint(hs.Clusters[0], policy.TaintClusterUnreachable, corev1.TaintEffectNoExecute)
	}).Clusters[0]

	// A restarted healthd carries on: no new transition, the same taints.
	stop()
	cfg.Instance = "1"
	reg := prometheus.NewRegistry()
	stop = start(t, cfg, bus, reg)
	again := await(t, &s, events.TypeClusterHealthSnapshot, "a snapshot from the restarted healthd", func(hs events.HealthSnapshot) bool {
		return len(hs.Clusters) == 1 && hs.Clusters[0].ObservedAt.After(lost.ObservedAt.Add(50*time.Millisecond))
	}).Clusters[0]
	if fmt.Sprint(again.Taints) != fmt.Sprint(lost.Taints) || !again.Since.Equal(lost.Since) || !again.FailingSince.Equal(*lost.FailingSince) {
		t.Errorf("after a restart the taints, since and failingSince carry on:\nwant %v %v %v\ngot  %v %v %v",
			lost.Taints, lost.Since, lost.FailingSince, again.Taints, again.Since, again.FailingSince)
	}
	deadline := time.Now().Add(5 * time.Second)
	for gauge(t, reg, "flotilla_cluster_noexecute_tainted", "member1") != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := gauge(t, reg, "flotilla_cluster_noexecute_tainted", "member1"); got != 1 {
		t.Errorf("the restarted healthd's gauges follow the restored state: flotilla_cluster_noexecute_tainted = %v, want 1", got)
	}
	s.mu.Lock()
	for _, m := range s.seen {
		if m.Err == nil && m.Event.Type() == string(events.TypeClusterHealthChanged) && m.Event.Source() == "/healthd/1" {
			t.Errorf("a restarted healthd must not announce the lost member again: %s", m.Data)
		}
	}
	s.mu.Unlock()
}

// start runs healthd until the returned stop is called.
func start(t *testing.T, cfg Config, bus *natsbus.Bus, reg *prometheus.Registry) (stop func()) {
	t.Helper()
	return startWith(t, cfg, Deps{Bus: bus, Registry: reg})
}

// startWith is start with deps (a nop logger and health unless set).
func startWith(t *testing.T, cfg Config, deps Deps) (stop func()) {
	t.Helper()
	if deps.Log == nil {
		deps.Log = zap.NewNop()
	}
	if deps.Health == nil {
		deps.Health = observe.NewHealth()
	}
	d, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("run: %v", err)
			}
		})
	}
}

func count(s *stream, typ events.Type) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.seen {
		if m.Err == nil && m.Event.Type() == string(typ) {
			n++
		}
	}
	return n
}

// gauge reads a cluster's value of a gauge from reg (0 when absent).
func gauge(t *testing.T, reg *prometheus.Registry, name, cluster string) float64 {
	t.Helper()
	return observetest.Gauge(t, reg, name, "cluster", cluster)
}

// A healthd restarted after it followed a cluster's deletion rebuilds the
// tombstone from the member subject: a registration older than the
// deletion delivered afterwards (as a redelivery would bring it) starts no
// prober.
func TestARestartedHealthdIgnoresARegistrationOlderThanTheDeletion(t *testing.T) {
	_, bus := eventstest.Server(t)
	keyPath := filepath.Join(t.TempDir(), "credentials.key")
	key, err := sealing.LoadOrCreate(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := newMember(t)
	cfg := DefaultConfig()
	cfg.CredentialsKey = keyPath
	cfg.ProbeInterval, cfg.ProbeTimeout = 10*time.Millisecond, 200*time.Millisecond
	cfg.CapacityInterval, cfg.SnapshotInterval = time.Hour, time.Hour
	var s stream
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = bus.Watch(wctx, events.StreamHealth, []string{events.AllHealth}, false, s.add) }()

	// The first healthd follows member1's registration and deletion (its
	// consumer moves past both), then stops.
	register(t, bus, key, "member1", m.URL) // generation 1
	dereg, _ := events.New(events.TypeClusterDeregistered, "/test", "member1", events.ClusterRegistration{Name: "member1", Generation: 2})
	if err := bus.Publish(ctx, events.MemberSubject("member1"), dereg); err != nil {
		t.Fatal(err)
	}
	register(t, bus, key, "member2", m.URL)
	stop := start(t, cfg, bus, prometheus.NewRegistry())
	await(t, &s, events.TypeClusterHealthChanged, "member2 Ready", func(h events.ClusterHealth) bool {
		return h.Cluster == "member2" && h.State == events.ClusterStateReady
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := bus.JetStream().Consumer(ctx, events.StreamPolicy, ConsumerName)
		if err == nil {
			if info, err := c.Info(ctx); err == nil && info.NumPending == 0 && info.NumAckPending == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the members consumer did not move past the registrations")
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	s.mu.Lock()
	s.seen = nil
	s.mu.Unlock()

	// The second one catches up (member2's prober, and its ready gauge,
	// come from the catch-up, which reads member1's deletion before it),
	// then is handed the stale registration and, after it, member3's.
	reg := prometheus.NewRegistry()
	stop = start(t, cfg, bus, reg)
	defer stop()
	for gauge(t, reg, "flotilla_cluster_ready", "member2") != 1 {
		if time.Now().After(deadline.Add(10 * time.Second)) {
			t.Fatal("the restarted healthd does not probe member2")
		}
		time.Sleep(5 * time.Millisecond)
	}
	register(t, bus, key, "member1", m.URL)
	register(t, bus, key, "member3", newMember(t).URL)
	await(t, &s, events.TypeClusterHealthChanged, "member3 Ready", func(h events.ClusterHealth) bool {
		return h.Cluster == "member3" && h.State == events.ClusterStateReady
	})
	if gauge(t, reg, "flotilla_cluster_ready", "member1") != 0 {
		t.Fatal("a registration older than member1's deletion started a prober after a restart")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, msg := range s.seen {
		var h events.ClusterHealth
		if msg.Err == nil && events.Decode(msg.Event, &h) == nil && h.Cluster == "member1" {
			t.Fatalf("a registration older than member1's deletion started a prober after a restart: %s", msg.Data)
		}
	}
}
