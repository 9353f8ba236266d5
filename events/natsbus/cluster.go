package natsbus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
)

// ClusterNode is one nats-server of a JetStream cluster run as its own
// process (`flotilla nats-node`, started by deploy/nats/nats.sh).
type ClusterNode struct {
	Name    string // server_name, unique in the cluster
	Cluster string // cluster name, the same on every node
	Host    string // listen address of clients and routes
	Port    int    // client port
	// RoutePort is where the other nodes connect; Routes are their route
	// URLs (nats-route://host:port), this node's own may be among them.
	RoutePort int
	Routes    []string
	// MonitorPort serves /varz, /jsz (0: off).
	MonitorPort int
	DataDir     string
	// SyncAlways makes JetStream fsync every write before acknowledging it
	// (sync_interval: always), so that an acknowledged message survives a
	// power loss on a majority of the nodes (DESIGN.md §7).
	SyncAlways bool
}

// RunNode runs the node until ctx is done, then shuts it down.
func RunNode(ctx context.Context, n ClusterNode) error {
	var routes []*url.URL
	for _, r := range n.Routes {
		u, err := url.Parse(r)
		if err != nil {
			return fmt.Errorf("route %q: %w", r, err)
		}
		routes = append(routes, u)
	}
	opts := &server.Options{
		ServerName: n.Name,
		Host:       n.Host,
		Port:       n.Port,
		HTTPHost:   n.Host,
		HTTPPort:   n.MonitorPort,
		JetStream:  true,
		StoreDir:   n.DataDir,
		SyncAlways: n.SyncAlways,
		NoSigs:     true,
		MaxPayload: events.MaxPayload,
		Cluster:    server.ClusterOpts{Name: n.Cluster, Host: n.Host, Port: n.RoutePort},
		Routes:     routes,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("nats-server %s: %w", n.Name, err)
	}
	srv.ConfigureLogger()
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return fmt.Errorf("nats-server %s did not become ready on %s:%d (port in use?)", n.Name, n.Host, n.Port)
	}
	<-ctx.Done()
	srv.Shutdown()
	srv.WaitForShutdown()
	return nil
}

// WaitMetaLeader returns once the JetStream at urls (comma-separated)
// answers an account info request, which a cluster does only once it has
// a meta leader, or with ctx's error.
func WaitMetaLeader(ctx context.Context, urls string) error {
	var last error
	for {
		if last = metaReady(ctx, urls); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no JetStream meta leader at %s: %w", urls, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func metaReady(ctx context.Context, urls string) error {
	nc, err := nats.Connect(urls, nats.Timeout(time.Second), nats.MaxReconnects(0))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = js.AccountInfo(actx)
	return err
}

// clusterReplicas is the stream replica count for the servers nc knows:
// 3 when the cluster has three or more nodes, else 1. The nodes are those
// of the server's INFO (its cluster's client URLs) and the URLs given.
func clusterReplicas(nc *nats.Conn) int {
	if nc.ConnectedClusterName() == "" {
		return 1
	}
	nodes := map[string]bool{}
	for _, s := range nc.Servers() {
		if u, err := url.Parse(s); err == nil {
			nodes[u.Host] = true
		}
	}
	if len(nodes) >= 3 {
		return 3
	}
	return 1
}

// electionRetry makes a publish that finds no stream to answer (its
// leader is being elected, a node having gone or come back) try again for
// up to 10 s (or its context's deadline) instead of the client's 0.5 s;
// the event id makes a retry stored once.
var electionRetry = []jetstream.PublishOpt{jetstream.WithRetryAttempts(40), jetstream.WithRetryWait(250 * time.Millisecond)}

// ensureStream creates or updates a stream, trying again for up to a
// minute while the cluster cannot answer yet: a request times out or finds
// no responder while a leader is being elected. It asks for the creation
// first, which the server answers at once for a stream that exists with
// this config: several daemons starting together each proposing the same
// update to a replicated stream made all but one wait out the request
// timeout (5 s per stream).
func (b *Bus) ensureStream(ctx context.Context, cfg jetstream.StreamConfig) error {
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := b.js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			_, err = b.js.UpdateStream(ctx, cfg)
		}
		if err == nil || !transient(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		b.log.Warn("stream not ready yet, trying again", zap.String("stream", cfg.Name), zap.Error(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// transient reports whether a JetStream API error may go away by itself:
// no answer in time, nobody to answer, or the server saying it is busy.
func transient(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.Code == 503 || api.Code == 500
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// waitLeader waits, up to 10 s, until a replicated consumer has a leader:
// pull requests sent before are not answered, and the first messages
// would wait for the pull subscription's heartbeat to notice (30 s).
func waitLeader(ctx context.Context, c jetstream.Consumer) {
	deadline := time.Now().Add(10 * time.Second)
	for info := c.CachedInfo(); info.Cluster != nil && info.Cluster.Leader == "" && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		if fresh, err := c.Info(ctx); err == nil {
			info = fresh
		}
	}
}
