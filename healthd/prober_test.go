package healthd

import (
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/internal/clock"
)

// fakeClock is the daemon's clock in tests: it moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// registerWithoutCredentials publishes a registration with spec and no
// sealed kubeconfig, as policyd does for a Cluster without secretRef (a
// pull-mode cluster).
func registerWithoutCredentials(t *testing.T, bus *natsbus.Bus, name string, spec policy.ClusterSpec) {
	t.Helper()
	e, err := events.New(events.TypeClusterRegistered, "/test", name, events.ClusterRegistration{Name: name, Generation: 1, Spec: spec})
	if err == nil {
		err = bus.Publish(context.Background(), events.MemberSubject(name), e)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// watch collects FLOTILLA_HEALTH (transitions, snapshots and capacity)
// from the start until the test ends.
func watch(t *testing.T, bus *natsbus.Bus) *stream {
	s := &stream{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = bus.Watch(ctx, events.StreamHealth, []string{events.AllHealth, events.AllCapacity, events.HealthSnapshotSubject}, false, s.add)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

func testConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.CredentialsKey = filepath.Join(t.TempDir(), "credentials.key")
	cfg.ProbeInterval, cfg.ProbeTimeout = 10*time.Millisecond, 500*time.Millisecond
	cfg.CapacityInterval = 10 * time.Millisecond
	cfg.SnapshotInterval = 20 * time.Millisecond
	return cfg
}

func TestAClusterWithoutCredentialsIsProbedAnonymouslyAtItsAPIEndpointAndCanFailOver(t *testing.T) {
	_, bus := eventstest.Server(t)
	trusted, plain := newTLSMember(t), newMember(t)
	registerWithoutCredentials(t, bus, "trusted", policy.ClusterSpec{SyncMode: "Pull", APIEndpoint: trusted.URL})
	registerWithoutCredentials(t, bus, "plain", policy.ClusterSpec{SyncMode: "Pull", APIEndpoint: plain.URL})
	registerWithoutCredentials(t, bus, "nowhere", policy.ClusterSpec{SyncMode: "Pull"})
	cfg := testConfig(t)
	cfg.NoExecuteAfter = 200 * time.Millisecond
	roots := x509.NewCertPool()
	roots.AddCert(trusted.Certificate())
	s := watch(t, bus)
	stop := startWith(t, cfg, Deps{Bus: bus, Registry: prometheus.NewRegistry(), RootCAs: roots})
	defer stop()

	for name, url := range map[string]string{"trusted": trusted.URL, "plain": plain.URL} {
		h := await(t, s, events.TypeClusterHealthChanged, name+" Ready, judged anonymously", func(h events.ClusterHealth) bool {
			return h.Cluster == name && h.State == events.ClusterStateReady
		})
		if h.Reason != ReasonAnonymousProbe || !strings.HasPrefix(h.Message, "judged by anonymous GET "+url+"/readyz, since healthd holds no credentials") || len(h.Taints) != 0 {
			t.Errorf("%s: want reason AnonymousProbe, a message saying how it was judged and no taints; got %+v", name, h)
		}
	}
	nowhere := await(t, s, events.TypeClusterHealthChanged, "nowhere Unknown", func(h events.ClusterHealth) bool { return h.Cluster == "nowhere" })
	if nowhere.State != events.ClusterStateUnknown || nowhere.Reason != ReasonNoCredentials || !strings.Contains(nowhere.Message, "no credentials") {
		t.Errorf("a cluster with neither credentials nor apiEndpoint stays Unknown (NoCredentials): %+v", nowhere)
	}

	trusted.Close()
	lost := await(t, s, events.TypeClusterHealthChanged, "trusted Unreachable", func(h events.ClusterHealth) bool {
		return h.Cluster == "trusted" && h.State == events.ClusterStateUnreachable
	})
	if lost.FailingSince == nil || !hasTaint(lost, policy.TaintClusterUnreachable, corev1.TaintEffectNoSchedule) || !strings.HasPrefix(lost.LastProbeError, "anonymous /readyz: ") {
		t.Errorf("a lost cluster judged anonymously is Unreachable like any other, with FailingSince, the NoSchedule taint and the probe error: %+v", lost)
	}
	await(t, s, events.TypeClusterHealthChanged, "trusted tainted NoExecute", func(h events.ClusterHealth) bool {
		return h.Cluster == "trusted" && hasTaint(h, policy.TaintClusterUnreachable, corev1.TaintEffectNoExecute)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.seen {
		if m.Err == nil && m.Event.Type() == string(events.TypeClusterCapacityReported) {
			t.Errorf("healthd reads no capacity without credentials: %s %s", m.Subject, m.Data)
		}
	}
}

func TestAClusterWhoseCertificateIsNotVerifiedIsNeverReady(t *testing.T) {
	_, bus := eventstest.Server(t)
	m := newTLSMember(t)
	registerWithoutCredentials(t, bus, "untrusted", policy.ClusterSpec{APIEndpoint: m.URL})
	registerWithoutCredentials(t, bus, "skipped", policy.ClusterSpec{APIEndpoint: m.URL, InsecureSkipTLSVerification: true})
	s := watch(t, bus)
	// An empty pool trusts nothing, whatever this machine's trust store holds.
	stop := startWith(t, testConfig(t), Deps{Bus: bus, Registry: prometheus.NewRegistry(), RootCAs: x509.NewCertPool()})
	defer stop()

	first := await(t, s, events.TypeClusterHealthChanged, "untrusted Unknown", func(h events.ClusterHealth) bool { return h.Cluster == "untrusted" })
	if first.State != events.ClusterStateUnknown || first.Ready || first.Reason != ReasonCertificateNotVerified || first.FailingSince != nil ||
		!strings.Contains(first.Message, "is not verified") || !strings.Contains(first.Message, "spec.insecureSkipTLSVerification") ||
		!hasTaint(first, policy.TaintClusterNotReady, corev1.TaintEffectNoSchedule) {
		t.Errorf("want Unknown, not ready, reason CertificateNotVerified, no failing spell, the not-ready NoSchedule taint and a message naming the cause; got %+v", first)
	}
	skipped := await(t, s, events.TypeClusterHealthChanged, "skipped Ready", func(h events.ClusterHealth) bool { return h.Cluster == "skipped" })
	if skipped.State != events.ClusterStateReady || !strings.Contains(skipped.Message, "certificate not verified, as spec.insecureSkipTLSVerification says") {
		t.Errorf("spec.insecureSkipTLSVerification: Ready, and the message says the certificate was not verified; got %+v", skipped)
	}
	// Many probes later, still one transition for the untrusted cluster.
	await(t, s, events.TypeClusterHealthSnapshot, "a snapshot well after the first probe", func(hs events.HealthSnapshot) bool {
		return hs.TakenAt.After(first.ObservedAt.Add(200*time.Millisecond)) && len(hs.Clusters) == 2
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.seen {
		var h events.ClusterHealth
		if m.Err == nil && m.Event.Type() == string(events.TypeClusterHealthChanged) && events.Decode(m.Event, &h) == nil && h.Cluster == "untrusted" {
			if n++; h.Ready {
				t.Errorf("an answer healthd cannot verify must never count as Ready: %s", m.Data)
			}
		}
	}
	if n != 1 {
		t.Errorf("the untrusted cluster publishes one transition, not one per probe: got %d", n)
	}
}

func TestATaintRuleOnUnknownFiresForAClusterHealthdCannotProbe(t *testing.T) {
	_, bus := eventstest.Server(t)
	registerWithoutCredentials(t, bus, "pull", policy.ClusterSpec{SyncMode: "Pull"})
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata:
  name: unknown-too-long
spec:
  addOnConditions:
    - {conditionType: Ready, operator: In, statusValues: ["Unknown"]}
  removeOnConditions:
    - {conditionType: Ready, operator: In, statusValues: ["True"]}
  taints:
    - {key: example.com/unjudged, effect: NoExecute}
  addAfterSeconds: 60
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.TaintPolicyFile = file
	clk := &fakeClock{now: t0}
	s := watch(t, bus)
	stop := startWith(t, cfg, Deps{Bus: bus, Registry: prometheus.NewRegistry(), Clock: clock.Func(clk.Now)})
	defer stop()

	unknown := await(t, s, events.TypeClusterHealthChanged, "pull Unknown", func(h events.ClusterHealth) bool { return h.Cluster == "pull" })
	if want, got := "Unknown ready=false since=+0s not-ready:NoSchedule@+0s", summary(unknown); got != want || unknown.Reason != ReasonNoCredentials {
		t.Fatalf("want %s (NoCredentials)\ngot  %s (%s)", want, got, unknown.Reason)
	}
	// The rule holds from +0s; the prober's ticks must see +59s, then +61s.
	clk.Advance(59 * time.Second)
	await(t, s, events.TypeClusterHealthSnapshot, "a snapshot at +59s", func(hs events.HealthSnapshot) bool { return hs.TakenAt.Equal(t0.Add(59 * time.Second)) })
	if n := count(s, events.TypeClusterHealthChanged); n != 1 {
		t.Fatalf("before addAfterSeconds nothing changes: %d transitions", n)
	}
	clk.Advance(2 * time.Second)
	tainted := await(t, s, events.TypeClusterHealthChanged, "pull tainted by the rule", func(h events.ClusterHealth) bool {
		return h.Cluster == "pull" && len(h.Taints) == 2
	})
	if want, got := "Unknown ready=false since=+0s not-ready:NoSchedule@+0s example.com/unjudged:NoExecute@+61s", summary(tainted); got != want {
		t.Fatalf("the rule's taint arrives at the first tick after addAfterSeconds, without any probe:\nwant %s\ngot  %s", want, got)
	}
}

func TestARestartResumesFromTheSnapshotWhenTheLastTransitionWasNotStored(t *testing.T) {
	_, bus := eventstest.Server(t)
	keyPath := filepath.Join(t.TempDir(), "credentials.key")
	key, err := sealing.LoadOrCreate(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	m := newMember(t)
	m.Close()
	register(t, bus, key, "member1", m.URL)

	// An earlier healthd stored member1 Unreachable at +4s, then tainted it
	// NoExecute at +304s but failed to store that transition; its snapshot
	// at +396s carried it.
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	before := newTracker(300 * time.Second)
	for i := range 3 {
		before.Observe(refused, at(2*i))
	}
	stored := before.Health("member1")
	before.Evaluate(at(304))
	before.Observe(refused, at(395))
	entry := before.Health("member1")
	if want, got := "Unreachable ready=false since=+4s failing=+0s unreachable:NoSchedule@+4s unreachable:NoExecute@+304s", summary(entry); got != want {
		t.Fatalf("setup: want %s\ngot  %s", want, got)
	}
	publish := func(typ events.Type, subject string, data any) {
		e, err := events.New(typ, "/healthd/earlier", "", data)
		if err == nil {
			err = bus.Publish(context.Background(), subject, e)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	publish(events.TypeClusterHealthChanged, events.HealthSubject("member1"), stored)
	publish(events.TypeClusterHealthSnapshot, events.HealthSnapshotSubject, events.HealthSnapshot{Clusters: []events.ClusterHealth{entry}, TakenAt: at(396)})

	cfg := testConfig(t)
	cfg.CredentialsKey = keyPath
	clk := &fakeClock{now: at(400)} // 400s after Unreachable: the restored transition alone would stamp NoExecute now
	s := watch(t, bus)
	stop := startWith(t, cfg, Deps{Bus: bus, Registry: prometheus.NewRegistry(), Clock: clock.Func(clk.Now)})
	defer stop()

	again := await(t, s, events.TypeClusterHealthChanged, "member1's health published again by the restarted healthd", func(h events.ClusterHealth) bool {
		return h.Cluster == "member1" && len(h.Taints) == 2
	})
	if got, want := summary(again), summary(entry); got != want {
		t.Errorf("the transition that was not stored is published again, as the snapshot had it:\nwant %s\ngot  %s", want, got)
	}
	snap := await(t, s, events.TypeClusterHealthSnapshot, "a snapshot from the restarted healthd", func(hs events.HealthSnapshot) bool {
		return hs.TakenAt.Equal(at(400)) && len(hs.Clusters) == 1 && hs.Clusters[0].ObservedAt.Equal(at(400))
	}).Clusters[0]
	if got, want := summary(snap), summary(entry); got != want {
		t.Errorf("after the first probe, NoExecute keeps its timeAdded:\nwant %s\ngot  %s", want, got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.seen {
		if m.Err == nil && m.Event.Type() == string(events.TypeClusterHealthChanged) && m.Event.Source() == "/healthd/0" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the restarted healthd publishes the lost transition once, then nothing: %d transitions", n)
	}
}
