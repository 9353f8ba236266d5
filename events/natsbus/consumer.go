package natsbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
)

// ConsumerSpec describes a durable pull consumer. Name follows
// "<daemon>-<purpose>"; instances of a daemon that share a Name share the
// work (each message goes to one of them).
type ConsumerSpec struct {
	Name     string
	Stream   string
	Subjects []string
	// StartLastPerSubject makes a newly created consumer begin with the
	// latest message of each subject instead of the whole history.
	StartLastPerSubject bool
	// StartSequence makes a newly created consumer begin at this stream
	// sequence (0: the whole history): an instance that has just rebuilt
	// its state from the stream reads on from there.
	StartSequence uint64
	// InactiveThreshold deletes the consumer once nobody has pulled from
	// it for this long (0: never): the consumers of an instance that is
	// gone for good.
	InactiveThreshold time.Duration
	MaxDeliver        int             // default 6
	BackOff           []time.Duration // delays between redeliveries; default 1s, 5s, 15s, 30s, 60s
	// AckWait is how long JetStream waits for an acknowledgement before it
	// redelivers (default 10s): after a crash, what the crashed process had
	// taken is handled again this long after it died. Messages this process
	// holds get an InProgress heartbeat every AckWait/3, however long they
	// wait.
	AckWait time.Duration
	// Prefetch is how many messages are fetched ahead (default 64).
	Prefetch int
	// Deadline bounds one handler call (default 30s): the handler's context
	// is cancelled then, and an error it returns is Nak'd with the backoff
	// like any other. It is also how long a consumer holding messages may go
	// without settling one before Ready reports it stuck.
	Deadline time.Duration
	// Concurrency is how many subjects are handled at once (default 1: one
	// message at a time, in stream order). Messages of one subject are
	// handled one at a time in stream order whatever Concurrency is; above 1
	// the handler is called concurrently for distinct subjects, so a long
	// call holds back only its own subject.
	Concurrency int
}

func (s *ConsumerSpec) defaults() {
	if s.MaxDeliver == 0 {
		s.MaxDeliver = 6
	}
	if len(s.BackOff) == 0 {
		s.BackOff = []time.Duration{time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute}
	}
	if s.AckWait == 0 {
		s.AckWait = DefaultAckWait
	}
	if s.Prefetch == 0 {
		s.Prefetch = DefaultPrefetch
	}
	if s.Deadline == 0 {
		s.Deadline = DefaultDeadline
	}
	if s.Concurrency == 0 {
		s.Concurrency = 1
	}
}

// Consumer defaults (DESIGN.md §4 has the measurements behind them).
const (
	DefaultAckWait  = 10 * time.Second
	DefaultPrefetch = 64
	DefaultDeadline = 30 * time.Second
)

// Consumer is a bound durable consumer.
type Consumer struct {
	bus  *Bus
	spec ConsumerSpec
	// c is the bound consumer; Run binds it again when its subscription
	// ends under it (mu: Ready reads it meanwhile).
	mu      sync.Mutex
	c       jetstream.Consumer
	running atomic.Bool
	// progress is when Run last settled a message, or took one while it
	// held none, in Unix nanoseconds; held is the running Run's pipeline.
	progress atomic.Int64
	held     atomic.Pointer[pipeline]
	// undelivered is 1 + the consumer's delivered sequence when Ready last
	// saw messages waiting in the stream, 0 if it saw none.
	undelivered atomic.Uint64
}

// Ready reports whether Run is pulling messages and making progress (for
// /readyz). A consumer is stuck, and the error names it, when for longer
// than its Deadline it has settled no message while it holds some, or
// while messages wait in the stream and none was delivered between two
// calls of Ready.
func (c *Consumer) Ready() error {
	if c == nil || !c.running.Load() {
		return errors.New("consumer not running")
	}
	if !c.bus.Connected() {
		return errors.New("NATS disconnected")
	}
	idle := time.Since(time.Unix(0, c.progress.Load()))
	if idle <= c.spec.Deadline {
		return nil
	}
	if p := c.held.Load(); p != nil {
		if n, oldest := p.holding(); n > 0 {
			return fmt.Errorf("consumer %s stuck: no message settled for %s while it holds %d (the oldest, on %s, for %s)",
				c.spec.Name, idle.Round(100*time.Millisecond), n, oldest.m.Subject(), time.Since(oldest.start).Round(100*time.Millisecond))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := c.bound().Info(ctx)
	if err != nil {
		return fmt.Errorf("consumer %s: %w", c.spec.Name, err)
	}
	if info.NumPending == 0 {
		c.undelivered.Store(0)
		return nil
	}
	seen := c.undelivered.Swap(info.Delivered.Consumer + 1)
	if seen == info.Delivered.Consumer+1 {
		return fmt.Errorf("consumer %s stuck: %d messages wait in the stream and none was delivered for %s", c.spec.Name, info.NumPending, idle.Round(100*time.Millisecond))
	}
	return nil
}

// DropConsumer deletes a durable consumer, if it exists, so that the next
// Bind creates it afresh at its spec's start (a daemon whose state is
// rebuilt by replaying the stream, not resumed from the consumer's
// position).
func (b *Bus) DropConsumer(ctx context.Context, stream, name string) error {
	return b.untilAnswered(ctx, "drop "+name, transient, func() error {
		err := b.js.DeleteConsumer(ctx, stream, name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil
		}
		return err
	})
}

// Bind creates the durable consumer if missing (idempotently) and returns it.
// An existing consumer keeps its position: a restarted daemon resumes where
// it stopped and loses nothing published meanwhile. Its filters, MaxDeliver,
// AckWait and MaxAckPending are set back to spec's when they differ, so that
// a daemon whose version reads more subjects sees them, and a consumer
// someone re-filtered is repaired at the next start.
func (b *Bus) Bind(ctx context.Context, spec ConsumerSpec) (*Consumer, error) {
	spec.defaults()
	deliver := jetstream.DeliverAllPolicy
	if spec.StartLastPerSubject {
		deliver = jetstream.DeliverLastPerSubjectPolicy
	}
	var start uint64
	if spec.StartSequence > 0 {
		deliver, start = jetstream.DeliverByStartSequencePolicy, spec.StartSequence
	}
	cfg := jetstream.ConsumerConfig{
		Durable:        spec.Name,
		AckPolicy:      jetstream.AckExplicitPolicy,
		DeliverPolicy:  deliver,
		FilterSubjects: spec.Subjects,
		// Unlimited on the server: the consumer gives up itself after
		// spec.MaxDeliver deliveries and dead-letters the message (settle).
		// A limit on the server would drop a message whose dead letter
		// could not be stored on its last delivery; unlimited, it comes
		// back until the dead letter is stored.
		MaxDeliver:    -1,
		AckWait:       spec.AckWait,
		MaxAckPending: 1000,
		OptStartSeq:   start,
		// Kept while pulled from; gone a while after its instance is.
		InactiveThreshold: spec.InactiveThreshold,
	}
	if len(cfg.FilterSubjects) == 1 {
		// One filter travels in the API subject, where a scoped grant
		// checks it (Grant.Scoped).
		cfg.FilterSubject, cfg.FilterSubjects = cfg.FilterSubjects[0], nil
	}
	// Asked again while the cluster cannot answer (its leaders being
	// elected after a restart): untilAnswered.
	var c jetstream.Consumer
	err := b.untilAnswered(ctx, "bind "+spec.Name, transient, func() (err error) {
		c, err = b.js.Consumer(ctx, spec.Stream, spec.Name)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			c, err = b.js.CreateConsumer(ctx, spec.Stream, cfg)
			if errors.Is(err, jetstream.ErrConsumerExists) {
				c, err = b.js.Consumer(ctx, spec.Stream, spec.Name)
			}
		}
		if err == nil && drifted(c.CachedInfo().Config, cfg) {
			update := c.CachedInfo().Config
			update.FilterSubject, update.FilterSubjects = cfg.FilterSubject, cfg.FilterSubjects
			update.MaxDeliver, update.AckWait, update.MaxAckPending = cfg.MaxDeliver, cfg.AckWait, cfg.MaxAckPending
			c, err = b.js.UpdateConsumer(ctx, spec.Stream, update)
		}
		return err
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("consumer %s: %w", spec.Name, ErrStreamMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s on %s: %w", spec.Name, spec.Stream, err)
	}
	waitLeader(ctx, c)
	return &Consumer{bus: b, spec: spec, c: c}, nil
}

// drifted reports whether a consumer's updatable settings differ from want.
func drifted(have, want jetstream.ConsumerConfig) bool {
	return have.FilterSubject != want.FilterSubject || !slices.Equal(have.FilterSubjects, want.FilterSubjects) ||
		have.MaxDeliver != want.MaxDeliver || have.AckWait != want.AckWait || have.MaxAckPending != want.MaxAckPending
}

// Run hands every message to h until ctx is done, and maps the outcome to
// an acknowledgement in one place:
//
//	nil                 -> Ack
//	events.Permanent    -> dead-letter with the reason, then Term
//	events.RetryAfter   -> NakWithDelay
//	other error         -> Nak with the consumer's backoff; after MaxDeliver
//	                       attempts the event is dead-lettered and terminated
//
// A message that is not a valid CloudEvent is dead-lettered without calling h.
//
// Messages of one subject are handed to h one at a time in stream order;
// up to Concurrency subjects are handled at once (see ConsumerSpec). Each
// call's context is cancelled after the Deadline; an error h returns then
// is mapped as above (a plain error: Nak with the backoff), a nil is
// acknowledged, as the work is done. From the moment it is fetched until
// it is settled, a message gets an InProgress heartbeat every AckWait/3,
// so it is not redelivered while this process holds it, even while h runs
// past its deadline (it is never lost; Ready reports the consumer stuck).
//
// Events h publishes with Bus.PublishDeferred are its message's effects: the
// message is acknowledged (or Nak'd, dead-lettered, terminated) only once
// every one of them is stored; meanwhile h is already handed the next
// message. A deferred event whose publish fails is published again until it
// is stored (see PublishDeferred); the message stays unacknowledged, kept
// from redelivery with InProgress, and is never Nak'd for it: h has moved its
// state on and would see nothing to do on a redelivery. If ctx ends first
// the message is left unacknowledged and is redelivered after AckWait, to a
// daemon that has rebuilt its state from the streams. A redelivery of a
// message this process still holds is not handed to h again.
func (c *Consumer) Run(ctx context.Context, h events.Handler) error {
	it, err := c.bound().Messages(pullOptions(c.spec.Prefetch)...)
	if err != nil {
		return fmt.Errorf("consume %s: %w", c.spec.Name, err)
	}
	defer func() { it.Stop() }()
	p := newPipeline(c)
	defer p.close()
	l := newLanes(c.spec.Concurrency)
	defer l.wait() // before p.close: no handler may queue once it is closed
	go p.settleInOrder(ctx)
	go p.keepAlive(ctx)
	c.held.Store(p)
	c.progress.Store(time.Now().UnixNano())
	c.running.Store(true)
	defer c.running.Store(false)
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil || c.bus.nc.IsClosed() || c.bus.nc.IsDraining() {
				return nil // stopped, or the bus closed under it
			}
			c.bus.log.Warn("consumer fetch", zap.String("consumer", c.spec.Name), zap.Error(err))
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				if it = c.resubscribe(ctx); it == nil {
					return nil
				}
			}
			continue
		}
		d := p.receive(m)
		if d == nil {
			continue // a redelivery of a message still held
		}
		if !l.run(ctx, m.Subject(), func() { c.handle(ctx, d, h, p) }) {
			p.release(d)
		}
	}
}

func (c *Consumer) bound() jetstream.Consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c
}

// resubscribe binds the consumer again and pulls from it, retrying every
// few seconds until it can or ctx is done (nil). The server ends a pull
// subscription whose consumer it lost (deleted, or a node gone with its
// only copy); the messages this process holds stay held and are settled
// through the new subscription's consumer, as acks go by reply subject.
func (c *Consumer) resubscribe(ctx context.Context) jetstream.MessagesContext {
	wait := 500 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
		b, err := c.bus.Bind(ctx, c.spec)
		if err != nil {
			c.bus.log.Warn("consumer rebind", zap.String("consumer", c.spec.Name), zap.Error(err))
			continue
		}
		it, err := b.c.Messages(pullOptions(c.spec.Prefetch)...)
		if err != nil {
			c.bus.log.Warn("consumer resubscribe", zap.String("consumer", c.spec.Name), zap.Error(err))
			continue
		}
		c.mu.Lock()
		c.c = b.c
		c.mu.Unlock()
		c.bus.log.Info("consumer resubscribed", zap.String("consumer", c.spec.Name))
		return it
	}
}

// settleQueue is how many handled messages may wait for their effects
// before the handlers wait.
const settleQueue = 256

// delivery is one message between its fetch and its acknowledgement.
type delivery struct {
	m         jetstream.Msg
	md        *jetstream.MsgMetadata
	delivered uint64
	typ       string
	err       error // the handler's result
	// unreadable: the message did not decode (the handler was not called).
	unreadable bool
	start      time.Time // fetched
	began      time.Time // handed to the handler
	effects    *batch
}

func (c *Consumer) handle(ctx context.Context, d *delivery, h events.Handler, p *pipeline) {
	if ctx.Err() != nil {
		p.release(d) // left unacknowledged: redelivered after AckWait
		return
	}
	d.began = time.Now()
	e, err := decode(d.m.Headers(), d.m.Data())
	d.unreadable = err != nil
	if err == nil {
		d.typ = e.Type()
		d.effects = &batch{}
		hctx := context.WithValue(ctx, batchKey{}, d.effects)
		if d.md != nil {
			hctx = events.WithDelivery(hctx, events.Delivery{Stream: d.md.Stream, Subject: d.m.Subject(), Sequence: d.md.Sequence.Stream, Delivered: d.delivered})
		}
		hctx, cancel := context.WithTimeout(hctx, c.spec.Deadline)
		err = safeHandle(hctx, h, e)
		if err != nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("past the handler deadline of %s: %w", c.spec.Deadline, err)
		}
		cancel()
	}
	d.err = err
	if d.effects == nil || len(d.effects.items()) == 0 {
		c.settle(ctx, d)
		p.release(d)
		return
	}
	p.queue <- d
}

// settle maps the handler's result to the acknowledgement.
func (c *Consumer) settle(ctx context.Context, d *delivery) {
	defer c.progress.Store(time.Now().UnixNano())
	m, delivered, err := d.m, d.delivered, d.err
	outcome := "ack"
	log := c.bus.log.With(zap.String("consumer", c.spec.Name), zap.String("subject", m.Subject()), zap.String("event_type", d.typ))
	if err == nil {
		_ = m.Ack()
	} else if delay, ok := events.RetryDelay(err); ok && !events.IsPermanent(err) && int(delivered) < c.spec.MaxDeliver {
		outcome = "retry"
		log.Info("retry later", zap.Duration("delay", delay), zap.Error(err))
		_ = m.NakWithDelay(delay)
	} else if events.IsPermanent(err) || int(delivered) >= c.spec.MaxDeliver {
		outcome = "deadletter"
		reason := err.Error()
		if !events.IsPermanent(err) {
			reason = fmt.Sprintf("gave up after %d deliveries: %s", delivered, reason)
		}
		log.Warn("dead-lettered", zap.String("reason", reason))
		if derr := c.deadLetter(ctx, d, reason); derr != nil {
			log.Error("dead-letter publish", zap.Error(derr))
			_ = m.NakWithDelay(5 * time.Second) // keep it: nothing is lost
		} else {
			_ = m.TermWithReason(truncate(reason, 200))
		}
	} else {
		outcome = "nak"
		i := min(int(delivered)-1, len(c.spec.BackOff)-1)
		log.Info("handler failed, will retry", zap.Uint64("delivered", delivered), zap.Error(err))
		_ = m.NakWithDelay(c.spec.BackOff[max(i, 0)])
	}
	c.bus.metrics.handled(c.spec.Name, d.typ, outcome, time.Since(d.began))
}

// pipeline holds every message from its fetch to its acknowledgement, and
// settles in order those whose handler has returned but whose deferred
// effects are not all stored yet (queue).
type pipeline struct {
	c       *Consumer
	queue   chan *delivery
	stopped chan struct{}
	mu      sync.Mutex
	waiting map[uint64]*delivery // held, by stream sequence
}

func newPipeline(c *Consumer) *pipeline {
	return &pipeline{c: c, queue: make(chan *delivery, settleQueue), stopped: make(chan struct{}), waiting: map[uint64]*delivery{}}
}

// receive makes a delivery of a fetched message and holds it, or returns
// nil if the same stream message is already held.
func (p *pipeline) receive(m jetstream.Msg) *delivery {
	d := &delivery{m: m, delivered: 1, typ: "invalid", start: time.Now()}
	d.began = d.start
	d.md, _ = m.Metadata()
	if d.md == nil {
		return d
	}
	d.delivered = d.md.NumDelivered
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.waiting[d.md.Sequence.Stream]; dup {
		return nil
	}
	if len(p.waiting) == 0 {
		p.c.progress.Store(d.start.UnixNano()) // idle until now: not stuck
	}
	p.waiting[d.md.Sequence.Stream] = d
	return d
}

func (p *pipeline) release(d *delivery) {
	if d.md == nil {
		return
	}
	p.mu.Lock()
	delete(p.waiting, d.md.Sequence.Stream)
	p.mu.Unlock()
}

// holding returns how many messages are held and the one held longest.
func (p *pipeline) holding() (int, *delivery) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var oldest *delivery
	for _, d := range p.waiting {
		if oldest == nil || d.start.Before(oldest.start) {
			oldest = d
		}
	}
	return len(p.waiting), oldest
}

// settleInOrder waits for each queued message's effects, then settles it.
// When ctx ends, what is queued gets a short grace to finish (its effects
// are usually acknowledged within milliseconds); the rest is left
// unacknowledged.
func (p *pipeline) settleInOrder(ctx context.Context) {
	defer close(p.stopped)
	grace, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
			t := time.NewTimer(shutdownGrace)
			defer t.Stop()
			select {
			case <-t.C:
				cancel()
			case <-grace.Done():
			}
		case <-grace.Done():
		}
	}()
	for d := range p.queue {
		stored := true
		for _, e := range d.effects.items() {
			if !p.c.bus.await(grace, e) {
				stored = false
				break
			}
		}
		if stored {
			p.c.settle(grace, d)
		}
		p.release(d)
	}
}

// shutdownGrace bounds how long a stopping consumer waits for effects.
const shutdownGrace = 5 * time.Second

// keepAlive tells JetStream that the messages held (waiting for their
// turn, being handled, or waiting for their effects) are still in
// progress, so that they are not redelivered meanwhile.
func (p *pipeline) keepAlive(ctx context.Context) {
	every := max(p.c.spec.AckWait/3, 100*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.stopped:
			return
		case <-t.C:
			p.mu.Lock()
			for _, d := range p.waiting {
				if time.Since(d.start) >= every {
					_ = d.m.InProgress()
				}
			}
			p.mu.Unlock()
		}
	}
}

// close stops the pipeline once the handler loop has returned: it waits
// for the queued messages to be settled (or given up, see settleInOrder).
func (p *pipeline) close() {
	close(p.queue)
	<-p.stopped
}

// safeHandle turns a handler panic into a Permanent error so that one
// poison event cannot stop the consumer.
func safeHandle(ctx context.Context, h events.Handler, e events.Event) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = events.Permanent(fmt.Errorf("handler panicked: %v", r))
		}
	}()
	return h(ctx, e)
}
