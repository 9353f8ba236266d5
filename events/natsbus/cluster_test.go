package natsbus_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// freePorts returns n ports free on 127.0.0.1 a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// cluster runs a three-node JetStream cluster in this process until the
// test ends and returns its client URLs, comma-separated. syncAlways
// makes the nodes fsync every write (sync_interval: always).
func cluster(t testing.TB, syncAlways bool) string {
	t.Helper()
	ports := freePorts(t, 6)
	var routes, urls []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[3+i]))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()} // removed after the nodes stop
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := range 3 {
		n := natsbus.ClusterNode{Name: fmt.Sprintf("n%d", i+1), Cluster: "test", Host: "127.0.0.1", Port: ports[i], RoutePort: ports[3+i], Routes: routes, DataDir: dirs[i], SyncAlways: syncAlways}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := natsbus.RunNode(ctx, n); err != nil {
				t.Error(err)
			}
		}()
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := natsbus.WaitMetaLeader(wctx, strings.Join(urls, ",")); err != nil {
		t.Fatal(err)
	}
	return strings.Join(urls, ",")
}

func TestStreamsAreScaledUpInPlaceAndNeverDown(t *testing.T) {
	urls := cluster(t, false)
	ctx := context.Background()
	connect := func(replicas int) *natsbus.Bus {
		bus, err := natsbus.Connect(ctx, urls, natsbus.Options{Name: t.Name(), StreamReplicas: replicas})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(bus.Close)
		if err := bus.EnsureStreams(ctx); err != nil {
			t.Fatal(err)
		}
		return bus
	}
	replicas := func(bus *natsbus.Bus) int {
		st, err := bus.JetStream().Stream(ctx, events.StreamPolicy)
		if err != nil {
			t.Fatal(err)
		}
		return st.CachedInfo().Config.Replicas
	}
	one := connect(1)
	if got := replicas(one); got != 1 {
		t.Fatalf("a stream created with --stream-replicas 1 has %d replicas", got)
	}
	publishOn(t, one, "kept1")
	three := connect(3)
	connect(1)
	if diff := cmp.Diff(3, replicas(three)); diff != "" {
		t.Errorf("replicas after scaling to 3 and ensuring with 1 (-want +got):\n%s", diff)
	}
	st, err := three.JetStream().Stream(ctx, events.StreamPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.CachedInfo().State.Msgs; got != 1 {
		t.Errorf("the scaled stream holds %d messages, want the 1 published before: it was recreated", got)
	}
}

func TestReplicasDefaultToThreeOnAThreeNodeCluster(t *testing.T) {
	urls := cluster(t, false)
	first, _, _ := strings.Cut(urls, ",")
	for _, tc := range []struct {
		name, urls string
	}{
		{"every node's URL", urls},
		{"one node's URL (the others come from the server)", first},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus, err := natsbus.Connect(context.Background(), tc.urls, natsbus.Options{Name: t.Name()})
			if err != nil {
				t.Fatal(err)
			}
			defer bus.Close()
			if diff := cmp.Diff(3, bus.StreamReplicas()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplicasDefaultToOneOnOneServer(t *testing.T) {
	_, bus, _ := bound(t, natsbus.ConsumerSpec{Name: "test-one"})
	if diff := cmp.Diff(1, bus.StreamReplicas()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestAConsumerDeletedUnderRunIsBoundAgainAndKeepsPulling(t *testing.T) {
	ctx, bus, c := bound(t, natsbus.ConsumerSpec{Name: "test-rebind"}, "before1")
	got := make(chan string, 10)
	done := make(chan error, 1)
	go func() {
		done <- c.Run(ctx, func(_ context.Context, e events.Event) error { got <- dataOf(e); return nil })
	}()
	wait := func(want string) {
		t.Helper()
		for {
			select {
			case s := <-got:
				if s == want {
					return
				}
			case err := <-done:
				t.Fatalf("Run returned %v before %s was handled", err, want)
			case <-time.After(20 * time.Second):
				t.Fatalf("%s was not handled", want)
			}
		}
	}
	wait("before1")
	if err := bus.JetStream().DeleteConsumer(ctx, events.StreamPolicy, "test-rebind"); err != nil {
		t.Fatal(err)
	}
	publishOn(t, bus, "after1")
	wait("after1")
}
