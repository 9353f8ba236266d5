package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
)

// DefaultURL is where every Flotilla command looks for NATS unless told.
const DefaultURL = "nats://127.0.0.1:4222"

// Bus is a connection to NATS JetStream.
type Bus struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	log     *zap.Logger
	metrics *Metrics
	streams []events.StreamSpec
	auth    *connAuth
	// tlsOpts make another connection to the same server trust the same
	// CA (none for a plain connection).
	tlsOpts []nats.Option
	// reader: Options.Reader. readers are the consumer names a restricted
	// credential reads through (nil: any, created unnamed).
	reader  string
	readers *readerPool

	// Deferred publishing (PublishDeferred): pubMu makes the order in which
	// deferred events are numbered the order in which they leave; latest
	// holds, per subject, the number of the newest deferred event not yet
	// known stored. A retry holds pubMu (see redo).
	pubMu  sync.Mutex
	pubSeq uint64
	latest map[string]uint64

	replicas int // of the streams EnsureStreams creates
}

// Publishing limits. An asynchronous publish not acknowledged within
// asyncAckTimeout fails (and a deferred one is retried); a publisher with
// maxAsyncPending events unacknowledged waits up to asyncStallWait for room.
const (
	asyncAckTimeout = 10 * time.Second
	maxAsyncPending = 4000
	asyncStallWait  = 30 * time.Second
)

// Options tune a connection.
type Options struct {
	Name    string // client name shown by the server
	Log     *zap.Logger
	Metrics *Metrics // nil: metrics are not recorded
	// ConnectTimeout bounds the first connection attempt (default 5s).
	ConnectTimeout time.Duration
	// Streams are the streams EnsureStreams creates (nil: events.Streams;
	// tests give small limits here).
	Streams []events.StreamSpec
	// StreamReplicas is how many copies of each stream EnsureStreams keeps
	// (0: 3 when the server's cluster has three or more nodes, else 1).
	StreamReplicas int
	// Credentials is a credentials file (user JWT and seed); "": connect
	// without (a server with authentication off).
	Credentials string
	// TLSCA is a PEM file of the CA the server's TLS certificate is signed
	// by; given, the connection is TLS and trusts that CA only ("": plain,
	// or TLS verified against the system's CAs when the server demands it).
	TLSCA string
	// user replaces Credentials for Authority.ConnectAdmin.
	user *memoryUser
	// Reader, when set, is the name of the one consumer every read
	// (LatestPerSubject, Replay, HandleLatest) uses, one read at a time, and
	// deletes after it: a credential held to some subjects of a stream
	// (Grant.Scoped) may create no consumer of another name, so that it
	// can pull from no consumer but its own. Without it, a restricted
	// credential reads through the names ReaderNames derives from its key.
	Reader string
}

// Connect dials NATS at url, or at any of a cluster's comma-separated
// URLs, and prepares JetStream. It reconnects forever after the first
// success, to whichever node answers (connectOptions).
func Connect(ctx context.Context, url string, o Options) (*Bus, error) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 5 * time.Second
	}
	log := o.Log
	authOpts, auth, err := authOptions(o)
	if err != nil {
		return nil, err
	}
	var tlsOpts []nats.Option
	if o.TLSCA != "" {
		cfg, err := clientTLS(o.TLSCA)
		if err != nil {
			return nil, err
		}
		tlsOpts = []nats.Option{nats.Secure(cfg)}
	}
	nc, err := nats.Connect(url, append(append(authOpts, tlsOpts...), connectOptions(o)...)...)
	if err != nil {
		return nil, auth.connectError(url, err)
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(asyncAckTimeout), jetstream.WithPublishAsyncMaxPending(maxAsyncPending))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	if o.Streams == nil {
		o.Streams = events.Streams
	}
	replicas := o.StreamReplicas
	if replicas <= 0 {
		replicas = clusterReplicas(nc, clusterSettle, log)
	}
	b := &Bus{nc: nc, js: js, log: log, metrics: o.Metrics, streams: o.Streams, auth: auth, tlsOpts: tlsOpts, reader: o.Reader, latest: map[string]uint64{}, replicas: replicas}
	switch {
	case o.Reader != "":
		b.readers = newReaderPool([]string{o.Reader})
	case auth.id.Restricted:
		b.readers = newReaderPool(ReaderNames(auth.id.Key))
	}
	return b, nil
}

// Connection liveness: a server that answers no PING for
// pingInterval*maxPingsOut (a frozen or partitioned node, which closes no
// socket) is left for another node of the cluster within about 10 s,
// instead of the client's default of 4 minutes.
const (
	pingInterval = 3 * time.Second
	maxPingsOut  = 3
)

// connectOptions is every option of a Flotilla connection to NATS, in one
// place: identity, timeouts, reconnection to any node, liveness and the
// logging of disconnections.
func connectOptions(o Options) []nats.Option {
	log := o.Log
	return []nats.Option{
		nats.Name(o.Name),
		nats.Timeout(o.ConnectTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond),
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(maxPingsOut),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", zap.Error(err))
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats reconnected", zap.String("url", c.ConnectedUrl())) }),
	}
}

// Close drains and closes the connection.
func (b *Bus) Close() {
	if b == nil || b.nc == nil {
		return
	}
	_ = b.nc.Drain()
}

// Connected reports whether the NATS connection is up (for /readyz).
func (b *Bus) Connected() bool { return b != nil && b.nc != nil && b.nc.IsConnected() }

// JetStream exposes the JetStream handle to tests and tools in this package's family.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// StreamReplicas is how many copies of each stream EnsureStreams asks for.
func (b *Bus) StreamReplicas() int { return b.replicas }

// EnsureStreams creates or updates every stream of the catalogue
// (idempotent): a stream that exists takes the catalogue's limits in place,
// keeping its messages. A stream gets StreamReplicas copies, or keeps the
// more it has: an existing stream is scaled up in place, never down.
func (b *Bus) EnsureStreams(ctx context.Context) error {
	for _, s := range b.streams {
		if err := b.ensureStream(ctx, b.streamConfig(s)); err != nil {
			return fmt.Errorf("stream %s: %w", s.Name, err)
		}
	}
	return nil
}

// streamConfig is the configuration EnsureStreams gives a stream of the
// catalogue (ensureStream keeps the more copies an existing one has).
func (b *Bus) streamConfig(s events.StreamSpec) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              s.Name,
		Description:       s.Doc,
		Subjects:          s.Subjects,
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		MaxMsgsPerSubject: s.MaxPerSubject,
		MaxBytes:          s.MaxBytes,
		Duplicates:        5 * time.Minute,
		Discard:           discardPolicy(s),
		Replicas:          b.replicas,
	}
}

// discardPolicy is what a full stream does (events.StreamSpec.MaxBytes):
// a table refuses new messages, a log drops its oldest.
func discardPolicy(s events.StreamSpec) jetstream.DiscardPolicy {
	if s.Log {
		return jetstream.DiscardOld
	}
	return jetstream.DiscardNew
}

// replicasOf is the replica count stream name should have: StreamReplicas,
// or more if it already has more.
func (b *Bus) replicasOf(ctx context.Context, name string) int {
	if st, err := b.js.Stream(ctx, name); err == nil {
		return max(b.replicas, st.CachedInfo().Config.Replicas)
	}
	return b.replicas
}

// Publish stores e on the NATS subject subj and waits for JetStream's ack.
// The event id is sent as Nats-Msg-Id, so publishing the same event twice
// (a retry, a restarted daemon) stores it once.
func (b *Bus) Publish(ctx context.Context, subj string, e events.Event) error {
	_, err := b.PublishAck(ctx, subj, e)
	return err
}

// Ack is JetStream's answer to a publish.
type Ack struct {
	Stream string
	// Sequence is where the event is stored; for a duplicate, where the
	// event first published with its id is (or was) stored.
	Sequence uint64
	// Duplicate says the event id was already used within the stream's
	// duplicate window: nothing was stored, whatever the content.
	Duplicate bool
}

// PublishAck is Publish returning JetStream's ack, for a caller that must
// tell a stored event from a dropped duplicate (`flotilla publish`).
func (b *Bus) PublishAck(ctx context.Context, subj string, e events.Event) (Ack, error) {
	msg, err := b.message(subj, e)
	if err != nil {
		return Ack{}, err
	}
	// Number it like a deferred event: a deferred event on the same subject
	// whose publish failed earlier must not be retried on top of this one.
	b.pubMu.Lock()
	b.pubSeq++
	seq := b.pubSeq
	prev, hadPrev := b.latest[subj]
	b.latest[subj] = seq
	b.pubMu.Unlock()
	ack, err := b.publishMsg(ctx, msg)
	b.pubMu.Lock()
	if b.latest[subj] == seq {
		if err != nil && hadPrev {
			// Not stored: an earlier deferred event still waiting on this
			// subject is the subject's newest state again.
			b.latest[subj] = prev
		} else {
			delete(b.latest, subj)
		}
	}
	b.pubMu.Unlock()
	if err != nil {
		b.metrics.published(e.Type(), "error")
		return Ack{}, fmt.Errorf("publish %s on %s: %w", e.Type(), subj, err)
	}
	b.metrics.published(e.Type(), "ok")
	return Ack{Stream: ack.Stream, Sequence: ack.Sequence, Duplicate: ack.Duplicate}, nil
}

// PublishAsync queues e for storage without waiting; call Flush to wait for
// every ack. For bulk producers (apply of many documents, benchmarks). With
// 4000 events unacknowledged it waits for room (up to 30s).
func (b *Bus) PublishAsync(subj string, e events.Event) error {
	msg, err := b.message(subj, e)
	if err != nil {
		return err
	}
	if _, err := b.js.PublishMsgAsync(msg, append(electionRetry, jetstream.WithStallWait(asyncStallWait))...); err != nil {
		return fmt.Errorf("publish %s on %s: %w", e.Type(), subj, err)
	}
	b.metrics.published(e.Type(), "ok")
	return nil
}

// Flush waits until every PublishAsync has been acknowledged.
func (b *Bus) Flush(ctx context.Context) error {
	select {
	case <-b.js.PublishAsyncComplete():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PublishRaw stores a message with caller-given headers and body (used by
// `flotilla publish` for events that arrive already encoded, and by tests
// that need malformed events).
func (b *Bus) PublishRaw(ctx context.Context, subj string, headers map[string]string, data []byte) error {
	msg := nats.NewMsg(subj)
	for k, v := range headers {
		msg.Header.Set(k, v)
	}
	msg.Data = data
	_, err := b.publishMsg(ctx, msg)
	return err
}

// ErrTooLarge: an event is larger than the NATS server takes.
var ErrTooLarge = errors.New("more than the NATS server takes")

// message is e as the message to publish on subj, or a Permanent error
// when it is larger than the server takes (max_payload): no retry could
// send it, and nats.go would refuse it only once sent, an error the
// consumer would retry until it dead-lettered the input.
func (b *Bus) message(subj string, e events.Event) (*nats.Msg, error) {
	msg, err := toMsg(subj, e)
	if err != nil {
		return nil, err
	}
	if limit := b.nc.MaxPayload(); limit > 0 {
		if size := int64(len(msg.Data) + headerBytes(msg.Header)); size > limit {
			return nil, events.Permanent(fmt.Errorf("publish %s on %s: the event is %d bytes, %w (max_payload %d)", e.Type(), subj, size, ErrTooLarge, limit))
		}
	}
	return msg, nil
}

// headerBytes is the size of h on the wire ("NATS/1.0\r\n", a
// "key: value\r\n" line per value, "\r\n").
func headerBytes(h nats.Header) int {
	n := len("NATS/1.0\r\n\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

func toMsg(subj string, e events.Event) (*nats.Msg, error) {
	msg := &nats.Msg{Subject: subj, Header: make(nats.Header, 12)}
	values := make([]string, 0, 12) // one backing array for every header's value
	data, err := events.WriteHeaders(e, func(k, v string) {
		values = append(values, v)
		msg.Header[k] = values[len(values)-1 : len(values) : len(values)]
	})
	if err != nil {
		return nil, err
	}
	msg.Data = data
	return msg, nil
}

// decode turns a received message into an event. An event whose data is
// declared JSON but is not is unreadable too (Permanent): no reader could
// decode its payload, so it is dead-lettered as a bad row, once, rather than
// by every handler it reaches.
func decode(h nats.Header, data []byte) (events.Event, error) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	e, err := events.FromHeaders(h.Get, keys, data)
	if err == nil && len(data) > 0 && isJSON(e.DataContentType()) && !events.ValidJSON(data) {
		return events.Event{}, events.Permanent(fmt.Errorf("%s data is not valid JSON", e.Type()))
	}
	return e, err
}

// isJSON reports whether a content type is JSON (application/json, or a
// +json suffix, with or without parameters).
func isJSON(ct string) bool {
	ct, _, _ = strings.Cut(ct, ";")
	ct = strings.TrimSpace(strings.ToLower(ct))
	return ct == "application/json" || strings.HasSuffix(ct, "+json")
}

// Message is a stored event with its place in the stream.
type Message struct {
	Event    events.Event
	Subject  string
	Stream   string
	Sequence uint64
	Time     time.Time
	// Err is set when the stored message is unreadable: not a valid
	// CloudEvent, or its JSON data is not JSON.
	Err     error
	Headers nats.Header
	Data    []byte
	// Unreadable is set by LatestPerSubject when this message stands in
	// for a newer message of its subject that is unreadable.
	Unreadable *Unreadable
}

func toMessage(m jetstream.Msg) Message {
	out := Message{Subject: m.Subject(), Headers: m.Headers(), Data: m.Data()}
	if md, err := m.Metadata(); err == nil {
		out.Stream, out.Sequence, out.Time = md.Stream, md.Sequence.Stream, md.Timestamp
	}
	out.Event, out.Err = decode(m.Headers(), m.Data())
	return out
}

// ErrStreamMissing says the streams were never created (no daemon started yet).
var ErrStreamMissing = errors.New("stream not found: no Flotilla daemon has run against this NATS yet")
