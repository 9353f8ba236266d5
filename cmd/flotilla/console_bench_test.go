package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/console"
	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// Benchmark sizes: issue 20's 10,000 templates each placed on 10 of 100
// clusters (100,000 work rows).
const (
	benchClusters  = 100
	benchTemplates = 10000
	benchSpread    = 10
)

// fillConsoleBus stores on bus what the daemons would have stored for the
// benchmark's fleet: members with health and capacity, a binding, a
// placement and the work in every cluster of every template.
func fillConsoleBus(b *testing.B, bus *natsbus.Bus) {
	b.Helper()
	publish := func(typ events.Type, subject string, data any) {
		e, err := events.New(typ, "/bench", subject, data)
		if err != nil {
			b.Fatal(err)
		}
		if err := bus.PublishAsync(subject, e); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now()
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("1100")}
	name := func(i int) string { return fmt.Sprintf("member-%03d", i) }
	for i := range benchClusters {
		publish(events.TypeClusterRegistered, events.MemberSubject(name(i)), events.ClusterRegistration{Name: name(i), Generation: 1})
		publish(events.TypeClusterHealthChanged, events.HealthSubject(name(i)), events.ClusterHealth{Cluster: name(i), Ready: true, State: events.ClusterStateReady, Since: now})
		publish(events.TypeClusterCapacityReported, events.CapacitySubject(name(i)), events.ClusterCapacity{Cluster: name(i), Nodes: 10, ReadyNodes: 10, Allocatable: capacity, Allocated: capacity, ObservedAt: now})
	}
	ref := &events.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "spread"}
	for i := range benchTemplates {
		key := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: fmt.Sprintf("ns-%02d", i%50), Name: fmt.Sprintf("app-%05d", i)}
		tpl := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q},"spec":{"replicas":20}}`, key.Name, key.Namespace)
		binding := events.Binding{Key: key, APIVersion: "apps/v1", Generation: 1, Revision: 1, Policy: ref, Replicas: 20, Template: []byte(tpl), AcceptedAt: now}
		publish(events.TypeBindingChanged, events.BindingSubject(key), binding)
		var cs []events.TargetCluster
		for j := range benchSpread {
			cs = append(cs, events.TargetCluster{Name: name((i + j*benchSpread) % benchClusters), Replicas: 2})
		}
		publish(events.TypePlacementDecided, events.PlacementSubject(key), events.PlacementDecision{Key: key, Generation: 1, BindingRevision: 1, Scheduled: true,
			Clusters: cs, Strategy: "Divided/Aggregated", DecidedAt: now, Binding: &binding})
		for _, c := range cs {
			publish(events.TypeWorkStatusChanged, events.WorkSubject(c.Name, key), events.WorkStatus{Key: key, Cluster: c.Name, Generation: 1, BindingRevision: 1,
				Phase: events.WorkRunning, Replicas: 2, ReadyReplicas: 2, Health: events.WorkHealthy, CreatedAt: now, UpdatedAt: now})
		}
	}
	if err := bus.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkConsoleWorkloadsPage renders /workloads (50 templates × 100
// clusters a page) from a bus holding 10,000 templates each placed on 10
// of 100 clusters. ns/op is the server's time per page from the fleet as
// read; read-s is one read of the fleet from the bus (after each change),
// heap-MB what the console holds. With FLOTILLA_BIN set it also runs
// `flotilla console` on that bus and reports its RSS (rss-MB) after a page.
func BenchmarkConsoleWorkloadsPage(b *testing.B) {
	url, bus := eventstest.Server(b)
	fillConsoleBus(b, bus)
	ctx := context.Background()

	goruntime.GC()
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	s, err := console.New(busSource{bus}, nil)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if code := servePage(s, "/workloads"); code != http.StatusOK { // the first page reads the fleet
		b.Fatalf("GET /workloads: %d", code)
	}
	read := time.Since(start)
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	for _, path := range []string{"/", "/workloads?cluster=member-042", "/workloads?page=200", "/workloads/ns-07/Deployment.apps/app-00007"} {
		if code := servePage(s, path); code != http.StatusOK {
			b.Fatalf("GET %s: %d", path, code)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		servePage(s, "/workloads?page=100")
	}
	b.StopTimer()
	b.ReportMetric(read.Seconds(), "read-s")
	b.ReportMetric(float64(after.HeapInuse-min(after.HeapInuse, before.HeapInuse))/(1<<20), "heap-MB")
	if bin := os.Getenv("FLOTILLA_BIN"); bin != "" {
		b.ReportMetric(consoleRSS(b, ctx, bin, url), "rss-MB")
	}
}

func servePage(s *console.Server, path string) int {
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w.Code
}

// consoleRSS runs `flotilla console` on natsURL, loads /workloads and
// returns the process's resident memory in MB.
func consoleRSS(b *testing.B, ctx context.Context, bin, natsURL string) float64 {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.CommandContext(ctx, bin, "console", "--nats-url", natsURL, "--listen", addr)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/workloads")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("flotilla console did not serve /workloads: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb)
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
