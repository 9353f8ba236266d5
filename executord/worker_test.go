package executord

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/clock"
	"github.com/flotilla-io/flotilla/internal/observe/observetest"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/internal/observe"
)

var web = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}

var t0 = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

const webTemplate = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},
"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.25"}]}}}}`

// placement of web at binding revision rev, decided at t0 + after.
func placement(rev int64, after time.Duration, clusters ...events.TargetCluster) events.PlacementDecision {
	return events.PlacementDecision{Key: web, Generation: 1, BindingRevision: rev, Scheduled: true, Clusters: clusters, DecidedAt: t0.Add(after),
		Binding: &events.Binding{Key: web, APIVersion: "apps/v1", Generation: 1, Revision: rev, Template: json.RawMessage(webTemplate), Replicas: 2}}
}

func on(cluster string, replicas int32) events.TargetCluster {
	return events.TargetCluster{Name: cluster, Replicas: replicas}
}

// testClock is a clock the test moves by hand.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newTestDaemon is a pull-mode executord for member1 on the fake member
// (clk nil: the wall clock, for tests that run the resync loop).
func newTestDaemon(t *testing.T, bus *natsbus.Bus, m *fakeMember, clk *testClock, reg prometheus.Registerer, log *zap.Logger) *Daemon {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Cluster, cfg.ResyncInterval = "member1", 10*time.Millisecond
	deps := Deps{Bus: bus, Log: log, Health: observe.NewHealth(), Registry: reg, PullConfig: &rest.Config{Host: m.srv.URL, Timeout: 5 * time.Second}}
	if clk != nil {
		deps.Clock = clock.Func(clk.now)
	}
	d, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newTestWorker(t *testing.T, d *Daemon) *worker {
	t.Helper()
	w, err := newWorker(d, "member1", events.ClusterRegistration{Name: "member1"}, d.deps.PullConfig)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// runDaemon runs d until the test ends (or stop is called) and waits
// until member1's consumer pulls.
func runDaemon(t *testing.T, d *Daemon) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	waitFor(t, "member1's consumer pulls", func() bool {
		w := d.worker("member1")
		return w != nil && w.consumer.Load().Ready() == nil
	})
	return stop
}

func (d *Daemon) worker(name string) *worker {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.workers[name]
}

func (w *worker) heldNow(key events.ObjectKey) (held, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h, ok := w.held[key]
	if !ok {
		return held{}, false
	}
	return *h, true
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func handle(t *testing.T, w *worker, p events.PlacementDecision) {
	t.Helper()
	e, err := events.New(events.TypePlacementDecided, "/schedulerd/test", p.Key.String(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.HandlePlacement(context.Background(), e); err != nil {
		t.Fatalf("handle: %v (a member that does not answer must not fail the placement)", err)
	}
}

// publishPlacement publishes p as schedulerd does: the placement, and
// member1's assignment, which is what the pull-mode test daemon reads.
func publishPlacement(t *testing.T, bus *natsbus.Bus, p events.PlacementDecision) {
	t.Helper()
	e, err := events.New(events.TypePlacementDecided, "/schedulerd/test", p.Key.String(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(context.Background(), events.PlacementSubject(p.Key), e); err != nil {
		t.Fatal(err)
	}
	a, err := events.New(events.TypeWorkAssigned, "/schedulerd/test", p.Key.String(), events.AssignmentOf(p, policy.ClusterFacts{Name: "member1"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(context.Background(), events.AssignmentSubject("member1", p.Key), a); err != nil {
		t.Fatal(err)
	}
}

// publishRunning records that web was applied in member1 earlier.
func publishRunning(t *testing.T, bus *natsbus.Bus) {
	t.Helper()
	st := events.WorkStatus{Key: web, Cluster: "member1", Generation: 1, BindingRevision: 1, Phase: events.WorkRunning, Replicas: 2, ReadyReplicas: 2,
		Health: events.WorkHealthy, AvailableReplicas: 2, CreatedAt: t0, UpdatedAt: t0}
	e, err := events.New(events.TypeWorkStatusChanged, "/executord/test", web.String(), st)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(context.Background(), events.WorkSubject("member1", web), e); err != nil {
		t.Fatal(err)
	}
}

// latestWork is web's last work status in member1 and its event type.
func latestWork(t *testing.T, bus *natsbus.Bus) (events.WorkStatus, events.Type) {
	t.Helper()
	ms, err := bus.LatestPerSubject(context.Background(), events.StreamWork, events.WorkSubject("member1", web))
	if err != nil || len(ms) == 0 {
		return events.WorkStatus{}, ""
	}
	var st events.WorkStatus
	if err := events.Decode(ms[0].Event, &st); err != nil {
		t.Fatal(err)
	}
	return st, events.Type(ms[0].Event.Type())
}

func workCount(t *testing.T, bus *natsbus.Bus) int {
	t.Helper()
	ms, err := bus.Replay(context.Background(), events.StreamWork, natsbus.ReplayOptions{Subjects: []string{events.WorkSubject("member1", web)}})
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

// gauge reads a cluster's value of a gauge from reg (0 when absent).
func gauge(t *testing.T, reg *prometheus.Registry, name, cluster string) float64 {
	t.Helper()
	return observetest.Gauge(t, reg, name, "cluster", cluster)
}

func deadLetters(t *testing.T, bus *natsbus.Bus) int {
	t.Helper()
	ms, err := bus.Replay(context.Background(), events.StreamDeadLetter, natsbus.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

var healthyStatus = map[string]any{"replicas": int64(2), "updatedReplicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(2)}

func TestHeldRemovalIsAcknowledgedAndCarriedOutWhenTheMemberReturns(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.put("default", "web", true)
	member.down.Store(true)
	publishRunning(t, bus)
	reg := prometheus.NewRegistry()
	core, logs := observer.New(zap.InfoLevel)
	d := newTestDaemon(t, bus, member, nil, reg, zap.New(core))
	runDaemon(t, d)

	publishPlacement(t, bus, placement(2, 0, on("member2", 2)))
	waitFor(t, "the removal is held and shown as Deleting", func() bool {
		st, _ := latestWork(t, bus)
		return st.Phase == events.WorkDeleting
	})
	ctx := context.Background()
	c, err := bus.JetStream().Consumer(ctx, events.StreamWork, ConsumerFor("member1"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the placement is acknowledged", func() bool {
		info, err := c.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0 && info.Delivered.Consumer >= 1
	})
	if info, _ := c.Info(ctx); info.NumRedelivered != 0 {
		t.Fatalf("the placement was redelivered %d times; a held removal acknowledges it", info.NumRedelivered)
	}
	if got := gauge(t, reg, "flotilla_executor_pending_removals", "member1"); got != 1 {
		t.Fatalf("pending removals = %v, want 1", got)
	}
	w := d.worker("member1")
	waitFor(t, "the removal is retried while the member is down", func() bool {
		h, ok := w.heldNow(web)
		return ok && h.failures >= 3
	})
	if !member.has("deployments/default/web") {
		t.Fatal("the object is gone while the member was down")
	}

	member.down.Store(false)
	waitFor(t, "the held removal is carried out", func() bool {
		_, typ := latestWork(t, bus)
		return typ == events.TypeWorkDeleted
	})
	if member.has("deployments/default/web") {
		t.Fatal("the member still holds the object")
	}
	if got := gauge(t, reg, "flotilla_executor_pending_removals", "member1"); got != 0 {
		t.Fatalf("pending removals = %v, want 0", got)
	}
	if n := logs.FilterMessage("held until the member answers").Len(); n != 1 {
		t.Fatalf("the hold was logged %d times, want once", n)
	}
	if n := deadLetters(t, bus); n != 0 {
		t.Fatalf("%d dead letters, want none", n)
	}
}

func TestHeldRemovalSurvivesARestart(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.put("default", "web", true)
	member.down.Store(true)
	publishRunning(t, bus)
	publishPlacement(t, bus, placement(2, 0, on("member2", 2)))

	first := newTestDaemon(t, bus, member, nil, prometheus.NewRegistry(), zap.NewNop())
	stop := runDaemon(t, first)
	waitFor(t, "the removal is held", func() bool {
		st, _ := latestWork(t, bus)
		return st.Phase == events.WorkDeleting
	})
	stop()

	reg := prometheus.NewRegistry()
	second := newTestDaemon(t, bus, member, nil, reg, zap.NewNop())
	runDaemon(t, second)
	waitFor(t, "the restarted executord holds the removal again", func() bool {
		return gauge(t, reg, "flotilla_executor_pending_removals", "member1") == 1
	})
	member.down.Store(false)
	waitFor(t, "the held removal is carried out", func() bool {
		_, typ := latestWork(t, bus)
		return typ == events.TypeWorkDeleted
	})
	if member.has("deployments/default/web") {
		t.Fatal("the member still holds the object")
	}
	if n := deadLetters(t, bus); n != 0 {
		t.Fatalf("%d dead letters, want none", n)
	}
}

func TestStartUpRemovesWhatTheLatestPlacementNoLongerPutsThere(t *testing.T) {
	// executord was down while web left member1; the member was reachable
	// all along, and the catch-up finds the object still there.
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.put("default", "web", true)
	publishRunning(t, bus)
	publishPlacement(t, bus, placement(2, 0, on("member2", 2)))
	d := newTestDaemon(t, bus, member, nil, prometheus.NewRegistry(), zap.NewNop())
	runDaemon(t, d)
	waitFor(t, "the object is removed", func() bool {
		_, typ := latestWork(t, bus)
		return typ == events.TypeWorkDeleted
	})
	if member.has("deployments/default/web") {
		t.Fatal("the member still holds the object")
	}
}

func TestHeldRemovalIsDroppedWhenALaterPlacementPutsTheTemplateBack(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.put("default", "web", true)
	member.setStatus(healthyStatus)
	clk := &testClock{t: t0}
	reg := prometheus.NewRegistry()
	w := newTestWorker(t, newTestDaemon(t, bus, member, clk, reg, zap.NewNop()))
	w.work[web] = events.WorkStatus{Key: web, Cluster: "member1", Generation: 1, BindingRevision: 1, Phase: events.WorkRunning, CreatedAt: t0}
	member.down.Store(true)

	handle(t, w, placement(2, time.Second, on("member2", 2)))
	if h, ok := w.heldNow(web); !ok || !h.remove {
		t.Fatalf("held = %+v, %v; want a held removal", h, ok)
	}
	handle(t, w, placement(3, 2*time.Second, on("member1", 2)))
	if h, ok := w.heldNow(web); !ok || h.remove {
		t.Fatalf("held = %+v, %v; want the removal dropped and the apply held (the member is still down)", h, ok)
	}
	if got := gauge(t, reg, "flotilla_executor_pending_removals", "member1"); got != 0 {
		t.Fatalf("pending removals = %v, want 0", got)
	}
	if got := gauge(t, reg, "flotilla_executor_pending_applies", "member1"); got != 1 {
		t.Fatalf("pending applies = %v, want 1", got)
	}

	member.down.Store(false)
	clk.add(time.Minute)
	w.retryHeld(context.Background(), clk.now())
	if _, ok := w.heldNow(web); ok {
		t.Fatal("still held after the member answered")
	}
	if applies, deletes := member.counts(); applies != 1 || deletes != 0 {
		t.Fatalf("member saw %d applies and %d deletes, want 1 and 0", applies, deletes)
	}
	if st, _ := latestWork(t, bus); st.Phase != events.WorkRunning || st.Health != events.WorkHealthy || st.BindingRevision != 3 {
		t.Fatalf("status = %s %s revision %d, want Running Healthy revision 3", st.Phase, st.Health, st.BindingRevision)
	}
}

func TestHeldRetriesWaitOutTheirBackoffUntilTheMemberAnswers(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.put("default", "web", true)
	clk := &testClock{t: t0}
	w := newTestWorker(t, newTestDaemon(t, bus, member, clk, prometheus.NewRegistry(), zap.NewNop()))
	w.work[web] = events.WorkStatus{Key: web, Cluster: "member1", Generation: 1, BindingRevision: 1, Phase: events.WorkRunning, CreatedAt: t0}
	member.down.Store(true)
	handle(t, w, placement(2, 0, on("member2", 2)))
	ctx := context.Background()

	w.retryHeld(ctx, clk.now()) // not due: the first retry waits one resync interval
	if h, _ := w.heldNow(web); h.failures != 1 {
		t.Fatalf("failures = %d, want 1 (retried before its time)", h.failures)
	}
	clk.add(10 * time.Millisecond)
	w.retryHeld(ctx, clk.now())
	h, _ := w.heldNow(web)
	if h.failures != 2 || !h.next.Equal(clk.now().Add(20*time.Millisecond)) {
		t.Fatalf("failures %d, next %s; want 2 and one doubled interval later", h.failures, h.next.Sub(clk.now()))
	}
	member.down.Store(false)
	w.retryHeld(ctx, clk.now()) // still backing off
	if _, deletes := member.counts(); deletes != 0 {
		t.Fatal("retried before its backoff ended")
	}
	clk.add(20 * time.Millisecond)
	w.retryHeld(ctx, clk.now())
	if _, deletes := member.counts(); deletes != 1 {
		t.Fatal("not deleted once the member answered")
	}
	if _, typ := latestWork(t, bus); typ != events.TypeWorkDeleted {
		t.Fatalf("last work event %s, want %s", typ, events.TypeWorkDeleted)
	}
}

func TestEvictedCopyIsKeptUntilTheEvictionIsPurged(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.setStatus(healthyStatus)
	clk := &testClock{t: t0}
	w := newTestWorker(t, newTestDaemon(t, bus, member, clk, prometheus.NewRegistry(), zap.NewNop()))
	handle(t, w, placement(1, 0, on("member1", 2), on("member2", 2)))

	evicted := placement(2, time.Minute, on("member2", 4))
	ev := events.Eviction{Cluster: "member1", Reason: events.EvictApplicationFailure, PurgeMode: events.PurgeGracefully, GracePeriodSeconds: 600, Replicas: 2, EvictedAt: t0.Add(time.Minute)}
	evicted.Evictions = []events.Eviction{ev}
	handle(t, w, evicted)
	st, _ := latestWork(t, bus)
	if want := "evicted (ApplicationFailure): kept until the replacement is healthy or the grace period ends"; st.Message != want || st.Phase != events.WorkRunning {
		t.Fatalf("status %s %q, want Running %q", st.Phase, st.Message, want)
	}
	member.mu.Lock()
	member.objects["deployments/default/web"]["spec"].(map[string]any)["replicas"] = float64(5) // changed by hand
	member.mu.Unlock()
	w.resync(context.Background())
	if applies, deletes := member.counts(); applies != 1 || deletes != 0 {
		t.Fatalf("member saw %d applies and %d deletes, want 1 and 0: a kept copy is neither repaired nor removed", applies, deletes)
	}

	purged := evicted
	purged.DecidedAt = purged.DecidedAt.Add(time.Minute)
	at := t0.Add(2 * time.Minute)
	ev.PurgedAt, ev.PurgeReason = &at, "replacement healthy"
	purged.Evictions = []events.Eviction{ev}
	handle(t, w, purged)
	if member.has("deployments/default/web") {
		t.Fatal("the copy is still there after the purge")
	}
	if _, typ := latestWork(t, bus); typ != events.TypeWorkDeleted {
		t.Fatalf("last work event %s, want %s", typ, events.TypeWorkDeleted)
	}
}

func TestStatusIsPublishedAgainOnlyWhenHealthOrCountsChange(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.setStatus(map[string]any{"replicas": int64(2), "updatedReplicas": int64(2), "readyReplicas": int64(1), "availableReplicas": int64(1)})
	clk := &testClock{t: t0}
	d := newTestDaemon(t, bus, member, clk, prometheus.NewRegistry(), zap.NewNop())
	w := newTestWorker(t, d)
	ctx := context.Background()
	check := func(what string, count int, health string, available, unavailable int32, since *time.Time) {
		t.Helper()
		st, _ := latestWork(t, bus)
		if n := workCount(t, bus); n != count {
			t.Fatalf("%s: %d statuses published, want %d", what, n, count)
		}
		if st.Health != health || st.AvailableReplicas != available || st.UnavailableReplicas != unavailable {
			t.Fatalf("%s: %s %d available %d unavailable, want %s %d %d", what, st.Health, st.AvailableReplicas, st.UnavailableReplicas, health, available, unavailable)
		}
		if (st.UnhealthySince == nil) != (since == nil) || (since != nil && !st.UnhealthySince.Equal(*since)) {
			t.Fatalf("%s: unhealthySince %v, want %v", what, st.UnhealthySince, since)
		}
	}
	at := func(d time.Duration) *time.Time { t := t0.Add(d); return &t }

	handle(t, w, placement(1, 0, on("member1", 2)))
	check("applied with one replica unavailable", 1, events.WorkUnhealthy, 1, 1, at(0))
	clk.add(10 * time.Second)
	w.resync(ctx)
	check("read back unchanged", 1, events.WorkUnhealthy, 1, 1, at(0))

	member.setStatus(map[string]any{"replicas": int64(2), "updatedReplicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(2)})
	clk.add(10 * time.Second)
	w.resync(ctx)
	check("every replica available", 2, events.WorkHealthy, 2, 0, nil)
	clk.add(10 * time.Second)
	w.resync(ctx)
	check("still healthy", 2, events.WorkHealthy, 2, 0, nil)

	member.setStatus(map[string]any{"replicas": int64(2), "updatedReplicas": int64(2)})
	clk.add(10 * time.Second)
	w.resync(ctx)
	check("no replica available any more", 3, events.WorkUnhealthy, 0, 2, at(40*time.Second))
	member.setStatus(map[string]any{"replicas": int64(2), "updatedReplicas": int64(2), "readyReplicas": int64(1), "availableReplicas": int64(1)})
	clk.add(10 * time.Second)
	w.resync(ctx)
	check("one replica back, still unhealthy: the run goes on", 4, events.WorkUnhealthy, 1, 1, at(40*time.Second))

	// A restarted executord starts from the last published status and
	// catches up with the latest placement: same health, same time, nothing
	// published.
	restarted := newTestWorker(t, d)
	st, _ := latestWork(t, bus)
	restarted.work[web] = st
	clk.add(time.Minute)
	handle(t, restarted, placement(1, 0, on("member1", 2)))
	check("after a restart", 4, events.WorkUnhealthy, 1, 1, at(40*time.Second))
}

func TestHeldRemovalReleasesTheDependenciesOnlyItNeededOnceCarriedOut(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.setStatus(healthyStatus)
	clk := &testClock{t: t0}
	w := newTestWorker(t, newTestDaemon(t, bus, member, clk, prometheus.NewRegistry(), zap.NewNop()))
	cfg := events.ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "cfg"}
	withDeps := func(p events.PlacementDecision) events.PlacementDecision {
		b := *p.Binding
		b.Dependencies = []events.Dependency{{Key: cfg, APIVersion: "v1", Generation: 1,
			Template: json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},"data":{"a":"b"}}`)}}
		p.Binding = &b
		return p
	}
	handle(t, w, withDeps(placement(1, 0, on("member1", 2))))
	if !member.has("configmaps/default/cfg") {
		t.Fatal("the dependency was not applied with the workload")
	}

	member.down.Store(true)
	handle(t, w, withDeps(placement(2, time.Second, on("member2", 2))))
	member.down.Store(false)
	if !member.has("configmaps/default/cfg") || !member.has("deployments/default/web") {
		t.Fatal("something was removed while the member was down")
	}
	clk.add(time.Minute)
	w.retryHeld(context.Background(), clk.now())
	if member.has("deployments/default/web") || member.has("configmaps/default/cfg") {
		t.Fatal("the workload or its dependency is still in the member after the held removal")
	}
	if st := w.work[cfg]; st.Phase != events.WorkDeleted {
		t.Fatalf("dependency status %s, want %s", st.Phase, events.WorkDeleted)
	}
}

// A placement redelivered after the template's removal was carried out
// here (what a killed executord had taken comes back after its AckWait)
// does not bring the deleted template back, in the same process or after a
// restart, which knows the removal from the work status alone; a template
// applied again (a later binding revision) is applied.
func TestAPlacementRedeliveredAfterTheRemovalDoesNotBringTheTemplateBack(t *testing.T) {
	removed := func() events.Event {
		e, err := events.New(events.TypePlacementRemoved, "/schedulerd/test", web.String(),
			events.PlacementDecision{Key: web, Generation: 1, BindingRevision: 2, Error: "removed", DecidedAt: t0.Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		name string
		// restarted: the removal was carried out by an earlier process;
		// this one knows it from the rebuilt work status.
		restarted bool
		late      events.PlacementDecision
		wantThere bool
	}{
		{name: "the placement the removal superseded, in the same process", late: placement(1, 0, on("member1", 2))},
		{name: "the placement the removal superseded, after a restart", restarted: true, late: placement(1, 0, on("member1", 2))},
		{name: "a placement of the template applied again is applied", restarted: true, late: placement(3, 2*time.Second, on("member1", 2)), wantThere: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, bus := eventstest.Server(t)
			member := newFakeMember(t)
			member.setStatus(healthyStatus)
			w := newTestWorker(t, newTestDaemon(t, bus, member, &testClock{t: t0}, prometheus.NewRegistry(), zap.NewNop()))
			if c.restarted {
				w.work[web] = events.WorkStatus{Key: web, Cluster: "member1", Generation: 1, BindingRevision: 2, Phase: events.WorkDeleted, CreatedAt: t0}
			} else {
				handle(t, w, placement(1, 0, on("member1", 2)))
				if !member.has("deployments/default/web") {
					t.Fatal("the first placement was not applied")
				}
				if err := w.HandlePlacement(context.Background(), removed()); err != nil {
					t.Fatal(err)
				}
			}
			if member.has("deployments/default/web") {
				t.Fatal("the member holds the template after its removal")
			}
			handle(t, w, c.late)
			if got := member.has("deployments/default/web"); got != c.wantThere {
				t.Errorf("the member holds the template after the late placement: %v, want %v", got, c.wantThere)
			}
		})
	}
}
