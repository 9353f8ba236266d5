package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// consoleOnBus serves the console on a real nats-server with
// authentication on, connected with the console role's credentials, over
// the recorded events (published with admin credentials). It returns the
// console's URL and the admin connection.
func consoleOnBus(t *testing.T) (string, *natsbus.Bus) {
	t.Helper()
	dir := t.TempDir()
	auth, err := loadUpAuth(dir, true, false)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := natsbus.StartEmbedded("127.0.0.1:0", filepath.Join(dir, "js"), auth.authority)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	connect := func(role string) *natsbus.Bus {
		file, err := auth.mint(role)
		if err != nil {
			t.Fatal(err)
		}
		bus, err := natsbus.Connect(context.Background(), srv.URL(), natsbus.Options{Name: role, Credentials: file})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(bus.Close)
		return bus
	}
	admin := connect(roleAdmin)
	ctx := context.Background()
	if err := admin.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range recorded(t) {
		if _, err := admin.PublishAck(ctx, r.subject, r.event); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- serveConsole(cctx, connect(roleConsole), l, zap.NewNop(), io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("console: %v", err)
		}
	})
	return "http://" + l.Addr().String(), admin
}

func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return string(b)
}

// The console with the console role's credentials reads every page from
// the bus, and an event stored after a page loaded reaches it within a
// second.
func TestTheConsoleReadsTheBusWithTheConsoleRole(t *testing.T) {
	url, admin := consoleOnBus(t)
	for path, want := range map[string][]string{
		"/":          {`data-cluster="cluster3" data-state="Unreachable"`, `data-cluster="cluster1" data-state="Ready"`},
		"/workloads": {`data-cluster="cluster1" data-phase="Running" data-replicas="4"`, `data-cluster="cluster3" data-phase="Unknown" data-replicas="0"`},
		"/workloads/default/Deployment.apps/my-app": {"Strategy:    Divided/Weighted", `data-what="placed"`},
		"/clusters/cluster3":                        {"cluster.karmada.io/unreachable:NoSchedule"},
		"/events?type=placement":                    {string(events.TypePlacementDecided)},
	} {
		page := fetch(t, url+path)
		for _, w := range want {
			if !strings.Contains(page, w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/live", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the stream is open
		t.Fatal(err)
	}
	healthy := events.ClusterHealth{Cluster: "cluster3", Ready: true, State: events.ClusterStateReady, Since: recordedAt}
	e, err := events.New(events.TypeClusterHealthChanged, "/test", events.HealthSubject("cluster3"), healthy)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := admin.PublishAck(ctx, events.HealthSubject("cluster3"), e); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		for {
			line, err := br.ReadString('\n')
			if err != nil || strings.HasPrefix(line, "event: ") {
				got <- strings.TrimSpace(line)
				return
			}
		}
	}()
	select {
	case line := <-got:
		if line != "event: changed" {
			t.Fatalf("the page was sent %q, want event: changed", line)
		}
	case <-time.After(time.Second):
		t.Fatal("no change reached the page within a second")
	}
	t.Logf("a stored event reached the page in %s", time.Since(start))
	if page := fetch(t, url+"/"); !strings.Contains(page, `data-cluster="cluster3" data-state="Ready"`) {
		t.Error("the overview refetched after the change does not show cluster3 Ready")
	}
}

// Several `flotilla up` run side by side: the second finds the console's
// address taken, warns, and runs without a console.
func TestUpWarnsAndRunsWithoutTheConsoleWhenItsAddressIsBusy(t *testing.T) {
	_, bus := eventstest.Server(t)
	rt := &runtime{bus: bus, log: zap.NewNop()}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	var warned strings.Builder
	run, err := upConsole(context.Background(), nil, "", rt, busy.Addr().String(), &warned)
	if err != nil || run != nil {
		t.Fatalf("a busy address: want no console and no error, got run %v, error %v", run != nil, err)
	}
	if want := "flotilla up: WARNING: console: listen on " + busy.Addr().String(); !strings.HasPrefix(warned.String(), want) {
		t.Errorf("the warning is %q, want it to start %q", warned.String(), want)
	}

	run, err = upConsole(context.Background(), nil, "", rt, "127.0.0.1:0", io.Discard)
	if err != nil || run == nil {
		t.Fatalf("a free address: want a console, got run %v, error %v", run != nil, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := run(ctx); err != nil { // serves, and stops at once
		t.Error(err)
	}
}

// Several `flotilla up` run side by side: the second finds the metrics
// address taken too, warns before it says ready, and runs without
// /metrics; it used to stop with an error after saying ready.
func TestUpWarnsAndRunsWithoutMetricsWhenTheirAddressIsBusy(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	rt := &runtime{log: zap.NewNop(), metricsAddr: busy.Addr().String()}
	var warned strings.Builder
	upMetrics(rt, &warned)
	if rt.metricsAddr != "" || rt.metricsLn != nil || !strings.HasPrefix(warned.String(), "flotilla up: WARNING: --metrics-addr "+busy.Addr().String()) {
		t.Errorf("a busy address: metrics %q, listener %v, warning %q; want none and a warning", rt.metricsAddr, rt.metricsLn != nil, warned.String())
	}
	rt = &runtime{log: zap.NewNop(), metricsAddr: "127.0.0.1:0"}
	upMetrics(rt, io.Discard)
	if rt.metricsLn == nil {
		t.Fatal("a free address: no listener")
	}
	rt.metricsLn.Close()
}
