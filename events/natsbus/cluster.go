package natsbus

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
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
	// Auth is the authority every node of the cluster trusts (nil:
	// authentication off). Each node keeps its own account resolver
	// beside its JetStream store; the full resolvers spread account
	// updates, revocations included, to one another.
	Auth *Authority
	// TLS, when set, makes client connections TLS only and routes TLS both
	// ways (routeTLS), with the one certificate and CA every node shares.
	TLS *TLSFiles
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
		// JetStreamMaxStore: see jetStreamStore.
		JetStreamMaxStore: jetStreamStore(n.DataDir),
		SyncAlways:        n.SyncAlways,
		NoSigs:            true,
		MaxPayload:        events.MaxPayload,
		Cluster:           server.ClusterOpts{Name: n.Cluster, Host: n.Host, Port: n.RoutePort},
		Routes:            routes,
	}
	if err := secure(opts, n.Auth); err != nil {
		return fmt.Errorf("nats-server %s: %w", n.Name, err)
	}
	if n.TLS != nil {
		if err := WithTLS(*n.TLS)(opts); err != nil {
			return fmt.Errorf("nats-server %s: %w", n.Name, err)
		}
		if err := routeTLS(opts, *n.TLS); err != nil {
			return fmt.Errorf("nats-server %s: %w", n.Name, err)
		}
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
// a meta leader, or with ctx's error. It connects as an admin auth signs
// in memory (nil: without credentials), over TLS verified with the CA in
// the PEM file tlsCA ("": plain).
func WaitMetaLeader(ctx context.Context, urls string, auth *Authority, tlsCA string) error {
	var opts []nats.Option
	if auth != nil {
		u, err := auth.adminInMemory("flotilla-wait", time.Hour)
		if err != nil {
			return err
		}
		opts = u.options()
	}
	if tlsCA != "" {
		cfg, err := clientTLS(tlsCA)
		if err != nil {
			return err
		}
		opts = append(opts, nats.Secure(cfg))
	}
	var last error
	for {
		if last = metaReady(ctx, urls, opts); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no JetStream meta leader at %s: %w", urls, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func metaReady(ctx context.Context, urls string, opts []nats.Option) error {
	nc, err := nats.Connect(urls, append([]nats.Option{nats.Timeout(time.Second), nats.MaxReconnects(0)}, opts...)...)
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
//
// A node tells its clients of the others only once its routes to them are
// up, which can be after a client connected: a daemon started with one
// node's URL as the cluster forms would see one node and give every stream
// one copy. So a node in a cluster that has told of fewer than three is
// given up to settle to tell of more, and the count it settles on is
// logged.
func clusterReplicas(nc *nats.Conn, settle time.Duration, log *zap.Logger) int {
	cluster := nc.ConnectedClusterName()
	if cluster == "" {
		return 1
	}
	deadline := time.Now().Add(settle)
	for {
		nodes := map[string]bool{}
		for _, s := range nc.Servers() {
			if u, err := url.Parse(s); err == nil {
				nodes[u.Host] = true
			}
		}
		if len(nodes) >= 3 {
			return 3
		}
		if !time.Now().Before(deadline) {
			log.Info("the NATS server is in a cluster but tells of fewer than three nodes: streams get one copy (give every node's URL, or --stream-replicas)",
				zap.String("cluster", cluster), zap.Int("nodes", len(nodes)), zap.Duration("waited", settle))
			return 1
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clusterSettle is how long Connect waits for a node of a cluster to tell
// of three nodes before counting one copy per stream (clusterReplicas).
const clusterSettle = 5 * time.Second

// electionRetry makes an asynchronous publish that finds no stream to
// answer (its leader is being elected, a node having gone or come back) try
// again for up to 10 s instead of the client's 0.5 s; the event id makes a
// retry stored once.
var electionRetry = []jetstream.PublishOpt{jetstream.WithRetryAttempts(40), jetstream.WithRetryWait(250 * time.Millisecond)}

// Requests while the cluster changes (untilAnswered): one attempt waits
// up to attempt for its answer; attempts go on for patience, or until the
// caller's deadline if it has one.
const (
	attempt    = 5 * time.Second
	patience   = 30 * time.Second
	retryPause = 250 * time.Millisecond
)

// untilAnswered calls try until it succeeds, fails with an error retry
// does not accept, or patience runs out, and returns try's last error. A
// leader being elected, a node gone or frozen with the request (the client
// leaves it within about 10 s, see connectOptions), a node that does not
// know a new consumer's subjects yet: each is answered by trying again, on
// whichever node the connection is on by then.
func (b *Bus) untilAnswered(ctx context.Context, what string, retry func(error) bool, try func() error) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(patience)
	}
	for {
		err := try()
		if err == nil || !retry(err) || ctx.Err() != nil || time.Now().Add(retryPause).After(deadline) {
			return err
		}
		b.log.Warn(what+" not answered, trying again", zap.Error(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(retryPause):
		}
	}
}

// publishAttempt bounds one attempt of a synchronous publish; it outlasts
// electionRetry, which covers a stream without a leader.
const publishAttempt = 12 * time.Second

// publishMsg stores msg and returns JetStream's ack, trying again while
// the cluster cannot answer (untilAnswered). No responders after
// electionRetry means no stream takes the subject, and is returned. A
// retry is the same message with the same Nats-Msg-Id, so a first attempt
// that was stored after all makes the retry a duplicate, not a second copy.
func (b *Bus) publishMsg(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	var ack *jetstream.PubAck
	retry := func(err error) bool {
		return transient(err) && !errors.Is(err, jetstream.ErrNoStreamResponse) && !errors.Is(err, nats.ErrNoResponders)
	}
	err := b.untilAnswered(ctx, "publish on "+msg.Subject, retry, func() error {
		actx, cancel := context.WithTimeout(ctx, publishAttempt)
		defer cancel()
		var err error
		ack, err = b.js.PublishMsg(actx, msg, electionRetry...)
		return err
	})
	return ack, err
}

// ensureStream creates or updates a stream, trying again for up to a
// minute while the cluster cannot answer yet: a request times out or finds
// no responder while a leader is being elected. A stream that exists with
// this config is left alone, without a request that changes anything:
// several daemons starting together each proposing the same update to a
// replicated stream made all but one wait out the request timeout (5 s
// per stream), and asking to create it again made the server reserve its
// storage a second time, refused ("insufficient storage resources") on a
// disk with less than the streams' caps free twice over.
func (b *Bus) ensureStream(ctx context.Context, cfg jetstream.StreamConfig) error {
	err := b.whileForming(ctx, "stream "+cfg.Name, func() error {
		st, err := b.js.Stream(ctx, cfg.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			_, err = b.js.CreateStream(ctx, cfg)
			if err == nil {
				return nil
			}
			// Another daemon created it meanwhile: refused as "name already
			// in use", or, when the storage cannot hold its cap twice, as
			// insufficient storage. Then it is checked as any existing one.
			var again error
			st, again = b.js.Stream(ctx, cfg.Name)
			if again != nil && isInsufficientStorage(err) {
				// The other daemon's creation holds the reservation
				// before its stream shows (longer on a slow disk).
				st, again = b.awaitStream(ctx, cfg.Name, creationSettle)
			}
			if again != nil {
				return err // still missing: the creation's own failure
			}
		} else if err != nil {
			return err
		}
		have, want := st.CachedInfo().Config, cfg
		want.Replicas = max(want.Replicas, have.Replicas) // scaled up, never down
		if sameStreamConfig(have, want) {
			return nil
		}
		_, err = b.js.UpdateStream(ctx, want)
		return err
	})
	if isInsufficientStorage(err) {
		return fmt.Errorf("%w: JetStream reserves each stream's cap (%d MiB) up front, and this server's storage limit "+
			"(by default three quarters of the free disk under its data directory when it started) cannot hold them all: free disk space and restart it", err, cfg.MaxBytes>>20)
	}
	var api *jetstream.APIError
	if errors.As(err, &api) && api.ErrorCode == jetstream.ErrorCode(10005) {
		// A cluster says the same of nodes without room for the cap as of
		// nodes not online yet, so it was waited on for a minute.
		return fmt.Errorf("%w: after a minute no node can place it: nodes offline, or without the storage its cap (%d MiB) reserves (free disk space on them)", err, cfg.MaxBytes>>20)
	}
	return err
}

// creationSettle is how long a creation refused for storage waits for
// another daemon's creation of the same stream to show.
const creationSettle = 3 * time.Second

// awaitStream looks the stream up until it exists or wait passes.
func (b *Bus) awaitStream(ctx context.Context, name string, wait time.Duration) (jetstream.Stream, error) {
	deadline := time.Now().Add(wait)
	for {
		st, err := b.js.Stream(ctx, name)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return st, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sameStreamConfig reports whether have already is what ensureStream
// would ask for.
func sameStreamConfig(have, want jetstream.StreamConfig) bool {
	return have.Description == want.Description && slices.Equal(have.Subjects, want.Subjects) &&
		have.Retention == want.Retention && have.Storage == want.Storage && have.MaxMsgsPerSubject == want.MaxMsgsPerSubject &&
		have.MaxBytes == want.MaxBytes && have.Duplicates == want.Duplicates && have.Discard == want.Discard && have.Replicas == want.Replicas
}

// isInsufficientStorage: the server has not the storage a stream's cap
// reserves (a 500 that stillForming would otherwise wait out).
func isInsufficientStorage(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jetstream.ErrorCode(10047)
}

// whileForming calls try until it succeeds, fails for a reason other than
// a cluster still forming (stillForming), or a minute passes. A cluster
// that has just elected its meta leader may not yet count every peer as
// online, so the first replicated stream or bucket is refused with "no
// suitable peers for placement, peer offline" for a moment.
func (b *Bus) whileForming(ctx context.Context, what string, try func() error) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := try()
		if err == nil || !stillForming(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		b.log.Warn("the cluster cannot place it yet, trying again", zap.String("what", what), zap.Error(err))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// transient reports whether a JetStream request may succeed if tried again
// as it is: no answer in time, nobody to answer, or the cluster saying it
// cannot answer now (no meta or stream leader, a node that is not caught
// up). A refusal of the request itself (a full stream: "maximum bytes
// exceeded" is a 503 too) is not.
func transient(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode {
		case jetstream.ErrorCode(10008), // JetStream system temporarily unavailable
			jetstream.ErrorCode(10009), // cluster can not handle request (not leader)
			jetstream.ErrorCode(10007), // cluster not assigned to this server
			jetstream.ErrorCode(10004), // incomplete results
			// duplicate message id is in process: another publisher's copy
			// of the same event (healthd and executord announce one seal
			// key at once) is being stored; once it is, a retry is a
			// duplicate, acknowledged.
			jetstream.ErrorCode(10158):
			return true
		}
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// stillForming reports whether a stream create or update may succeed if
// tried again: besides transient errors, any server-side 500 or 503,
// which is what a cluster electing its leaders answers these with.
func stillForming(err error) bool {
	if isInsufficientStorage(err) {
		return false // no cluster forming fixes a full disk
	}
	var api *jetstream.APIError
	if errors.As(err, &api) && (api.Code == 503 || api.Code == 500 ||
		api.ErrorCode == jetstream.ErrorCode(10005)) { // no suitable peers: one not yet online
		return true
	}
	return transient(err)
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

// pullOptions are how consumers pull: a pull request lasts 10 s and the
// server heartbeats every 2 s while it waits, so a pull whose consumer
// leader went away (a node killed or frozen, a leader elected elsewhere)
// is noticed and sent again to the new leader within about 4 s instead of
// the client's default 30 s (10 s for an ordered consumer).
func pullOptions(prefetch int) []jetstream.PullMessagesOpt {
	opts := []jetstream.PullMessagesOpt{jetstream.PullExpiry(10 * time.Second), jetstream.PullHeartbeat(2 * time.Second)}
	if prefetch > 0 {
		opts = append(opts, jetstream.PullMaxMessages(prefetch))
	}
	return opts
}
