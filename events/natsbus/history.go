package natsbus

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flotilla-io/flotilla/events"
)

// LatestPerSubject returns the newest message of every subject matching
// filters in stream, in stream order. It is how daemons rebuild their state
// at start-up and how the CLI reads current state: a stream keyed by subject
// is a table whose rows are the latest message per subject.
//
// A subject whose newest message is unreadable (Unreadable) is read as its
// newest readable message, with Message.Unreadable naming the newer row
// passed over (the bus logs it; the CLI warns); only a subject with no
// readable message at all is returned with Err set.
func (b *Bus) LatestPerSubject(ctx context.Context, stream string, filters ...string) ([]Message, error) {
	ms, err := b.readAll(ctx, stream, jetstream.ConsumerConfig{
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
		FilterSubjects: filters,
	})
	if err != nil {
		return ms, err
	}
	return b.passOverUnreadable(ctx, stream, ms)
}

// ReplayOptions select a slice of history.
type ReplayOptions struct {
	Since    time.Time // zero: from the start
	FromSeq  uint64    // per stream; overrides Since
	Subjects []string  // filters; empty = all of the stream
}

// ValidSubjectFilter reports whether s is a NATS subject filter: tokens
// separated by dots, none empty or holding white space, and ">" only as
// the last token.
func ValidSubjectFilter(s string) bool { return server.IsValidSubject(s) }

// Replay returns the stored messages of stream that match o, oldest first.
func (b *Bus) Replay(ctx context.Context, stream string, o ReplayOptions) ([]Message, error) {
	cfg := jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy, FilterSubjects: o.Subjects}
	switch {
	case o.FromSeq > 0:
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, o.FromSeq
	case !o.Since.IsZero():
		t := o.Since
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &t
	}
	return b.readAll(ctx, stream, cfg)
}

// readAll reads everything an ephemeral consumer with cfg has pending. It
// reads again from the start while the cluster cannot answer
// (untilAnswered).
func (b *Bus) readAll(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) ([]Message, error) {
	cfg.AckPolicy = jetstream.AckNonePolicy
	cfg.InactiveThreshold = 30 * time.Second
	cfg.MemoryStorage = true
	if len(cfg.FilterSubjects) == 1 {
		// One filter travels in the API subject, where a scoped grant
		// checks it (Grant.Scoped).
		cfg.FilterSubject, cfg.FilterSubjects = cfg.FilterSubjects[0], nil
	}
	if b.readers != nil {
		name, release, err := b.readers.take(ctx, stream)
		if err != nil {
			return nil, err
		}
		defer release()
		cfg.Name = name
	}
	var out []Message
	err := b.untilAnswered(ctx, "read "+stream, transient, func() error {
		var err error
		out, err = b.readOnce(ctx, stream, cfg)
		return err
	})
	return out, err
}

func (b *Bus) readOnce(ctx context.Context, stream string, cfg jetstream.ConsumerConfig) ([]Message, error) {
	cctx, cancel := context.WithTimeout(ctx, attempt)
	defer cancel()
	c, err := b.js.CreateConsumer(cctx, stream, cfg)
	if cfg.Name != "" && (errors.Is(err, jetstream.ErrConsumerExists) || err == nil && c.CachedInfo().Delivered.Consumer > 0) {
		// A read a crash or a lost leader interrupted left it (until it
		// expires), with another filter or part read: read afresh.
		_ = b.js.DeleteConsumer(cctx, stream, cfg.Name)
		c, err = b.js.CreateConsumer(cctx, stream, cfg)
	}
	cancel()
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, ErrStreamMissing
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", stream, err)
	}
	if !b.auth.id.Restricted || cfg.Name != "" { // else it may not: the consumer expires when idle
		defer func() { _ = b.js.DeleteConsumer(context.WithoutCancel(ctx), stream, c.CachedInfo().Name) }()
	}
	pending := c.CachedInfo().NumPending
	out := make([]Message, 0, pending)
	for uint64(len(out)) < pending {
		batch, err := c.Fetch(int(min(pending-uint64(len(out)), 1000)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return out, fmt.Errorf("read %s: %w", stream, err)
		}
		n := 0
		for m := range batch.Messages() {
			out = append(out, toMessage(m))
			n++
		}
		if batch.Error() != nil && !errors.Is(batch.Error(), jetstream.ErrNoMessages) {
			return out, fmt.Errorf("read %s: %w", stream, batch.Error())
		}
		if n == 0 {
			// Nothing came in FetchMaxWait: done if the server has nothing
			// left for us, else the consumer lost its leader mid-read.
			info, err := c.Info(ctx)
			if err != nil {
				return out, fmt.Errorf("read %s: %w", stream, err)
			}
			if info.NumPending > 0 {
				return out, fmt.Errorf("read %s: %d of %d messages read, %d left: %w", stream, len(out), pending, info.NumPending, nats.ErrTimeout)
			}
			break
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ErrMessageGone says a stream no longer holds the message asked for (its
// limits removed it, or it was never stored).
var ErrMessageGone = errors.New("message no longer stored")

// FetchMessage reads the message stored at seq in stream. It returns
// ErrMessageGone when the stream does not hold it (any more).
func (b *Bus) FetchMessage(ctx context.Context, stream string, seq uint64) (Message, error) {
	st, err := b.js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return Message{}, ErrStreamMissing
	}
	if err != nil {
		return Message{}, fmt.Errorf("read %s: %w", stream, err)
	}
	m, err := st.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Message{}, fmt.Errorf("%s sequence %d: %w", stream, seq, ErrMessageGone)
	}
	if err != nil {
		return Message{}, fmt.Errorf("read %s sequence %d: %w", stream, seq, err)
	}
	out := Message{Subject: m.Subject, Stream: stream, Sequence: m.Sequence, Time: m.Time, Headers: m.Header, Data: m.Data}
	out.Event, out.Err = decode(m.Header, m.Data)
	return out, nil
}

// Watch calls fn for every new message matching filters in stream until
// ctx is done. With fromLatest false it first replays history.
func (b *Bus) Watch(ctx context.Context, stream string, filters []string, fromLatest bool, fn func(Message)) error {
	sub, err := b.Subscribe(ctx, stream, filters, fromLatest)
	if err != nil {
		return err
	}
	return sub.Run(fn)
}

// Subscription follows a stream from Subscribe until the context given to
// Subscribe is done.
type Subscription struct {
	mu   sync.Mutex // guards it, which reopen replaces
	it   jetstream.MessagesContext
	done <-chan struct{}
	// reopen, on a subscription through a named consumer (a restricted
	// credential's, subscribeNamed), follows the stream again from the
	// sequence given once its consumer is lost; nil on an ordered
	// consumer, which does so by itself.
	reopen func(from uint64) (jetstream.MessagesContext, error)
	last   uint64 // the stream sequence of the last message handed on
}

// Subscribe starts following the messages matching filters in stream (with
// fromLatest false, from the start of its history) and returns once the
// server has created the consumer and received the pull for it: every
// message stored after Subscribe returns reaches Run. A caller that
// publishes and waits for the answer subscribes first, so the answer cannot
// slip by. The subscription ends when ctx is done.
func (b *Bus) Subscribe(ctx context.Context, stream string, filters []string, fromLatest bool) (*Subscription, error) {
	if b.readers != nil {
		return b.subscribeNamed(ctx, stream, filters, fromLatest)
	}
	var c jetstream.Consumer
	err := b.untilAnswered(ctx, "watch "+stream, transient, func() error {
		actx, cancel := context.WithTimeout(ctx, attempt)
		defer cancel()
		cfg := jetstream.OrderedConsumerConfig{FilterSubjects: filters, DeliverPolicy: jetstream.DeliverAllPolicy}
		if fromLatest {
			// From the sequence after the last stored, not DeliverNew: an
			// ordered consumer that is recreated before its first message
			// (its node gone, a missed heartbeat) starts again from here,
			// where with DeliverNew it would skip what came meanwhile.
			st, err := b.js.Stream(actx, stream)
			if err != nil {
				return err
			}
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, st.CachedInfo().State.LastSeq+1
		}
		var err error
		c, err = b.js.OrderedConsumer(actx, stream, cfg)
		return err
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, ErrStreamMissing
	}
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", stream, err)
	}
	it, err := b.follow(ctx, stream, c)
	if err != nil {
		return nil, err
	}
	s := &Subscription{it: it, done: ctx.Done()}
	context.AfterFunc(ctx, s.stop)
	return s, nil
}

// follow starts pulling from c. Messages creates an ordered consumer on
// the server (a request it answers), then subscribes and sends the first
// pull; the flush returns once the server has seen both.
func (b *Bus) follow(ctx context.Context, stream string, c jetstream.Consumer) (jetstream.MessagesContext, error) {
	it, err := c.Messages(pullOptions(0)...)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", stream, err)
	}
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.nc.FlushWithContext(fctx); err != nil {
		it.Stop()
		return nil, fmt.Errorf("watch %s: %w", stream, err)
	}
	return it, nil
}

// stop ends the subscription's pulls.
func (s *Subscription) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.it.Stop()
}

// Run calls fn for every message, in stream order, until the subscription
// ends (nil) or fails (the error).
func (s *Subscription) Run(fn func(Message)) error {
	for {
		s.mu.Lock()
		it := s.it
		s.mu.Unlock()
		m, err := it.Next()
		if err != nil {
			select {
			case <-s.done:
				return nil
			default:
			}
			if s.reopen == nil {
				return err
			}
			if err := s.resume(); err != nil {
				return err
			}
			continue
		}
		msg := toMessage(m)
		if s.reopen != nil {
			if msg.Sequence <= s.last {
				continue // delivered again after a resume
			}
			s.last = msg.Sequence
		}
		fn(msg)
	}
}

// resume follows the stream again after the last message handed on.
func (s *Subscription) resume() error {
	it, err := s.reopen(s.last + 1)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.it.Stop() // the lost consumer's pulls
	s.it = it
	select {
	case <-s.done:
		it.Stop() // stop ran on the one replaced
	default:
	}
	return nil
}

// SortByTime orders messages from several streams by their stored time.
func SortByTime(ms []Message) {
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Time.Before(ms[j].Time) })
}

// HandleLatest feeds the newest message of every subject matching filters
// to h, oldest first: how a daemon catches up with current state before it
// follows a durable consumer. Handler errors are left to the durable
// consumer's redelivery and do not stop the catch-up; a subject whose newest
// message is unreadable is fed its newest readable one (LatestPerSubject),
// and is skipped if it has none: the durable consumer dead-letters the
// unreadable row, once.
func (b *Bus) HandleLatest(ctx context.Context, stream string, h func(context.Context, events.Event) error, filters ...string) error {
	ms, err := b.LatestPerSubject(ctx, stream, filters...)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Err == nil {
			_ = h(ctx, m.Event)
		}
	}
	return nil
}
