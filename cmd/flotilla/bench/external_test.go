package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

func TestBenchAgainstAnExternalServerCountsItsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a nats-server and both daemons")
	}
	url, _ := eventstest.Server(t)
	// The server runs in this test's process: its pid stands for the server's.
	o := &benchOptions{clusters: 3, templates: 20, strategy: "static", output: "json", daemons: "inprocess", timeout: time.Minute, logLevel: "warn",
		instances: 1, nats: NATS{URL: url}, natsPIDs: []int{os.Getpid()}}
	var progress bytes.Buffer
	res, err := runBench(context.Background(), &progress, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var processes []string
	for _, c := range res.CPU {
		processes = append(processes, c.Process)
	}
	want := []string{"bench (nats-server, generator, policyd, schedulerd)", fmt.Sprintf("nats-server pid %d", os.Getpid())}
	if diff := cmp.Diff(want, processes); diff != "" {
		t.Errorf("processes counted (-want +got):\n%s", diff)
	}
	if res.NATS != url || res.Placements != 20 || res.Scheduled != 20 {
		t.Errorf("nats %q, %d placed, %d scheduled; want %q, 20, 20", res.NATS, res.Placements, res.Scheduled, url)
	}
}

func TestBenchRefusesAnExternalServerWhoseStreamsHoldEvents(t *testing.T) {
	url, bus := eventstest.Server(t)
	e, err := events.New(events.TypeObjectApplied, benchSource, "x", map[string]string{"a": "b"})
	if err != nil {
		t.Fatal(err)
	}
	key := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "bench", Name: "left-over"}
	if err := bus.Publish(context.Background(), events.InputSubject(key), e); err != nil {
		t.Fatal(err)
	}
	o := &benchOptions{clusters: 1, templates: 1, strategy: "static", output: "text", daemons: "inprocess", instances: 1, timeout: time.Minute, nats: NATS{URL: url}}
	_, err = runBench(context.Background(), &bytes.Buffer{}, o)
	if err == nil || !strings.Contains(err.Error(), events.StreamInput+" (1 messages) are not empty") {
		t.Fatalf("got %v, want a refusal naming the stream %s", err, events.StreamInput)
	}
}

func TestBenchOptionsNameEveryBadFlag(t *testing.T) {
	base := func() benchOptions {
		return benchOptions{clusters: 1, templates: 1, strategy: "static", output: "text", daemons: "process", instances: 1}
	}
	for _, tc := range []struct {
		name   string
		change func(*benchOptions)
		want   string
	}{
		{"no instance at all is refused", func(o *benchOptions) { o.instances = 0 }, "--instances: must be at least 1"},
		{"several instances in one process are refused", func(o *benchOptions) { o.instances, o.daemons = 2, "inprocess" }, "--instances: more than one needs --daemons process"},
		{"server pids without an external server are refused", func(o *benchOptions) { o.natsPIDs = []int{os.Getpid()} }, "--nats-pids: only with --nats-url"},
		{"a data dir with an external server is refused", func(o *benchOptions) { o.nats.URL, o.dataDir = "nats://x:1", "/tmp/x" }, "--data-dir: not with --nats-url"},
		{"a pid of no process is refused", func(o *benchOptions) { o.nats.URL, o.natsPIDs = "nats://x:1", []int{1 << 30} }, "--nats-pids: no process 1073741824"},
		{"negative replicas are refused", func(o *benchOptions) { o.streamReplicas = -1 }, "--stream-replicas: must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base()
			tc.change(&o)
			err := o.validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
