package natsbus_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

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
// makes the nodes fsync every write (sync_interval: always); the nodes
// trust auth (nil: authentication off) and serve clients and routes over
// TLS with tlsFiles (nil: plain).
func cluster(t testing.TB, syncAlways bool, auth *natsbus.Authority, tlsFiles *natsbus.TLSFiles) string {
	t.Helper()
	urls, _ := clusterRoutes(t, syncAlways, auth, tlsFiles)
	return urls
}

// clusterRoutes is cluster that also returns the nodes' route addresses
// (host:port).
func clusterRoutes(t testing.TB, syncAlways bool, auth *natsbus.Authority, tlsFiles *natsbus.TLSFiles) (string, []string) {
	t.Helper()
	urls, routes, start := unstartedCluster(t, syncAlways, auth, tlsFiles)
	for i := range 3 {
		start(i)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	ca := ""
	if tlsFiles != nil {
		ca = tlsFiles.CA
	}
	if err := natsbus.WaitMetaLeader(wctx, strings.Join(urls, ","), auth, ca); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, r := range routes {
		addrs = append(addrs, strings.TrimPrefix(r, "nats-route://"))
	}
	return strings.Join(urls, ","), addrs
}

// unstartedCluster is three nodes' client URLs and route URLs, and start,
// which runs node i until the test ends.
func unstartedCluster(t testing.TB, syncAlways bool, auth *natsbus.Authority, tlsFiles *natsbus.TLSFiles) (urls, routes []string, start func(i int)) {
	ports := freePorts(t, 6)
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[3+i]))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
	}
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()} // removed after the nodes stop
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	return urls, routes, func(i int) {
		n := natsbus.ClusterNode{Name: fmt.Sprintf("n%d", i+1), Cluster: "test", Host: "127.0.0.1", Port: ports[i], RoutePort: ports[3+i], Routes: routes, DataDir: dirs[i], SyncAlways: syncAlways, Auth: auth, TLS: tlsFiles}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := natsbus.RunNode(ctx, n); err != nil {
				t.Error(err)
			}
		}()
	}
}

func TestStreamsAreScaledUpInPlaceAndNeverDown(t *testing.T) {
	urls := cluster(t, false, nil, nil)
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
	urls := cluster(t, false, nil, nil)
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

func TestADaemonConnectedToANodeBeforeItsRoutesAreUpCountsThreeNodes(t *testing.T) {
	urls, _, start := unstartedCluster(t, false, nil, nil)
	ctx := context.Background()
	start(0)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		nc, err := nats.Connect(urls[0], nats.Timeout(time.Second))
		if err == nil {
			nc.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first node took no client in 10 s: %v", err)
		}
	}
	type connected struct {
		bus *natsbus.Bus
		err error
	}
	done := make(chan connected, 1)
	go func() {
		bus, err := natsbus.Connect(ctx, urls[0], natsbus.Options{Name: t.Name()})
		done <- connected{bus, err}
	}()
	time.Sleep(300 * time.Millisecond) // connected to a node that knows no other yet
	start(1)
	start(2)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	defer got.bus.Close()
	if diff := cmp.Diff(3, got.bus.StreamReplicas()); diff != "" {
		t.Errorf("stream replicas (-want +got):\n%s", diff)
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

// TestAClusterTrustingOneAuthorityRefusesStrangersAndKeepsTheCredentialsOnEveryNode:
// three nodes started with one authority refuse a connection without
// credentials on each node, let the authority's in-memory admin in, and
// the credentials bucket of a service run there gets three replicas, like
// the event streams.
func TestAClusterTrustingOneAuthorityRefusesStrangersAndKeepsTheCredentialsOnEveryNode(t *testing.T) {
	auth, err := natsbus.LoadOrCreateAuthority(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	urls := cluster(t, false, auth, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, u := range strings.Split(urls, ",") {
		_, err := natsbus.Connect(ctx, u, natsbus.Options{Name: t.Name()})
		var r *natsbus.Refusal
		if !errors.As(err, &r) {
			t.Errorf("%s without credentials: %v, want refused", u, err)
		}
	}
	bus, err := auth.ConnectAdmin(ctx, urls, natsbus.Options{Name: t.Name()})
	if err != nil {
		t.Fatalf("the authority's admin: %v", err)
	}
	defer bus.Close()
	svc, err := natsbus.NewCredentialService(ctx, bus, auth, func(natsbus.IssueRequest) (natsbus.Grant, error) { return natsbus.Grant{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	st, err := bus.JetStream().Stream(ctx, "KV_FLOTILLA_CREDENTIALS")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(3, st.CachedInfo().Config.Replicas); diff != "" {
		t.Errorf("credentials bucket replicas (-want +got):\n%s", diff)
	}
}

// TestATLSClusterServesClientsAndRoutesOnlyOverTLSWithItsCA: three nodes
// sharing one generated certificate serve every client port over TLS only:
// a client without the CA, or with another, is refused on each node and
// told to give it; one with it connects, and a stream of three replicas
// made through one node is read through another (the routes carry it).
// A route is served only over TLS with the nodes' certificate.
func TestATLSClusterServesClientsAndRoutesOnlyOverTLSWithItsCA(t *testing.T) {
	files, err := natsbus.LoadOrCreateTLS(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := natsbus.LoadOrCreateTLS(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	urls, routes := clusterRoutes(t, false, nil, &files)
	nodes := strings.Split(urls, ",")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		name, ca, wantErr string // wantErr "": connects
	}{
		{"a client without the CA is refused and told to give it", "", "give --tls-ca"},
		{"a client holding another CA is refused", other.CA, "give --tls-ca"},
		{"a client with the CA connects", files.CA, ""},
	} {
		for _, n := range nodes {
			bus, err := natsbus.Connect(ctx, n, natsbus.Options{Name: t.Name(), TLSCA: c.ca, ConnectTimeout: 2 * time.Second})
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				bus.Close()
			}
			if (c.wantErr == "") != (got == "") || !strings.Contains(got, c.wantErr) {
				t.Errorf("%s: %s: %q, want an error containing %q", c.name, n, got, c.wantErr)
			}
		}
	}

	first, err := natsbus.Connect(ctx, nodes[0], natsbus.Options{Name: t.Name(), TLSCA: files.CA, StreamReplicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if err := first.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := events.New(events.TypeObjectApplied, "/test", "k", map[string]string{"kind": "ConfigMap"})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Publish(ctx, "flotilla.input.default.v1.ConfigMap.tls", e); err != nil {
		t.Fatal(err)
	}
	third, err := natsbus.Connect(ctx, nodes[2], natsbus.Options{Name: t.Name(), TLSCA: files.CA})
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	// A replica may answer before it has the message (reads may be served
	// by any replica): read until it has, for up to 10 s.
	var ids []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ms, err := third.LatestPerSubject(ctx, events.StreamInput, "flotilla.input.default.v1.ConfigMap.tls")
		if err != nil {
			t.Fatal(err)
		}
		ids = nil
		for _, m := range ms {
			ids = append(ids, m.Event.ID())
		}
		if len(ids) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if diff := cmp.Diff([]string{e.ID()}, ids); diff != "" {
		t.Errorf("read through the third node (-want +got):\n%s", diff)
	}

	pool := x509.NewCertPool()
	raw, err := os.ReadFile(files.CA)
	if err != nil || !pool.AppendCertsFromPEM(raw) {
		t.Fatalf("CA %s: %v", files.CA, err)
	}
	cert, err := tls.LoadX509KeyPair(files.Cert, files.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		certs []tls.Certificate
		want  bool // the node's INFO is read
	}{
		{"a route dialed without the nodes' certificate is refused", nil, false},
		{"a route dialed with the nodes' certificate is served", []tls.Certificate{cert}, true},
	} {
		for _, r := range routes {
			got := routeInfo(r, &tls.Config{RootCAs: pool, Certificates: c.certs, MinVersion: tls.VersionTLS12})
			if got != c.want {
				t.Errorf("%s: %s: INFO read %t", c.name, r, got)
			}
		}
	}
}

// routeInfo reports whether a TLS connection to the route address addr
// made with cfg reads the node's INFO.
func routeInfo(addr string, cfg *tls.Config) bool {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "INFO ")
}
