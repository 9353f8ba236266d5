package natsbus

import (
	"context"
	"errors"
	"fmt"
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
	MaxDeliver          int             // default 6
	BackOff             []time.Duration // delays between redeliveries; default 1s, 5s, 15s, 30s, 60s
	AckWait             time.Duration   // default 60s
}

func (s *ConsumerSpec) defaults() {
	if s.MaxDeliver == 0 {
		s.MaxDeliver = 6
	}
	if len(s.BackOff) == 0 {
		s.BackOff = []time.Duration{time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute}
	}
	if s.AckWait == 0 {
		s.AckWait = time.Minute
	}
}

// Consumer is a bound durable consumer.
type Consumer struct {
	bus     *Bus
	spec    ConsumerSpec
	c       jetstream.Consumer
	running atomic.Bool
}

// Ready reports whether Run is pulling messages (for /readyz).
func (c *Consumer) Ready() error {
	if c == nil || !c.running.Load() {
		return errors.New("consumer not running")
	}
	if !c.bus.Connected() {
		return errors.New("NATS disconnected")
	}
	return nil
}

// Bind creates the durable consumer if missing (idempotently) and returns it.
// An existing consumer keeps its position: a restarted daemon resumes where
// it stopped and loses nothing published meanwhile.
func (b *Bus) Bind(ctx context.Context, spec ConsumerSpec) (*Consumer, error) {
	spec.defaults()
	deliver := jetstream.DeliverAllPolicy
	if spec.StartLastPerSubject {
		deliver = jetstream.DeliverLastPerSubjectPolicy
	}
	cfg := jetstream.ConsumerConfig{
		Durable:        spec.Name,
		AckPolicy:      jetstream.AckExplicitPolicy,
		DeliverPolicy:  deliver,
		FilterSubjects: spec.Subjects,
		MaxDeliver:     spec.MaxDeliver,
		AckWait:        spec.AckWait,
		MaxAckPending:  1000,
	}
	c, err := b.js.Consumer(ctx, spec.Stream, spec.Name)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		c, err = b.js.CreateConsumer(ctx, spec.Stream, cfg)
		if errors.Is(err, jetstream.ErrConsumerExists) {
			c, err = b.js.Consumer(ctx, spec.Stream, spec.Name)
		}
	}
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("consumer %s: %w", spec.Name, ErrStreamMissing)
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s on %s: %w", spec.Name, spec.Stream, err)
	}
	return &Consumer{bus: b, spec: spec, c: c}, nil
}

// Run hands every message to h, one at a time, until ctx is done, and maps
// the outcome to an acknowledgement in one place:
//
//	nil                 -> Ack
//	events.Permanent    -> dead-letter with the reason, then Term
//	events.RetryAfter   -> NakWithDelay
//	other error         -> Nak with the consumer's backoff; after MaxDeliver
//	                       attempts the event is dead-lettered and terminated
//
// A message that is not a valid CloudEvent is dead-lettered without calling h.
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
// message still waiting for its effects is not handed to h again.
func (c *Consumer) Run(ctx context.Context, h events.Handler) error {
	it, err := c.c.Messages(jetstream.PullMaxMessages(pullBatch))
	if err != nil {
		return fmt.Errorf("consume %s: %w", c.spec.Name, err)
	}
	go func() { <-ctx.Done(); it.Stop() }()
	p := newPipeline(c)
	defer p.close()
	go p.settleInOrder(ctx)
	go p.keepAlive(ctx)
	c.running.Store(true)
	defer c.running.Store(false)
	for {
		m, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			c.bus.log.Warn("consumer fetch", zap.String("consumer", c.spec.Name), zap.Error(err))
			continue
		}
		c.handle(ctx, m, h, p)
	}
}

// pullBatch is how many messages a consumer asks for at a time.
const pullBatch = 256

// delivery is one message between its handler and its acknowledgement.
type delivery struct {
	m         jetstream.Msg
	md        *jetstream.MsgMetadata
	delivered uint64
	typ       string
	err       error // the handler's result
	start     time.Time
	effects   *batch
}

func (c *Consumer) handle(ctx context.Context, m jetstream.Msg, h events.Handler, p *pipeline) {
	d := &delivery{m: m, delivered: 1, typ: "invalid", start: time.Now()}
	d.md, _ = m.Metadata()
	if d.md != nil {
		d.delivered = d.md.NumDelivered
		if !p.admit(d) {
			return // a redelivery of a message whose effects are still being stored
		}
	}
	e, err := decode(m.Headers(), m.Data())
	if err == nil {
		d.typ = e.Type()
		d.effects = &batch{}
		err = safeHandle(context.WithValue(ctx, batchKey{}, d.effects), h, e)
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
	m, md, delivered, err := d.m, d.md, d.delivered, d.err
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
		if derr := c.deadLetter(ctx, m, md, delivered, reason); derr != nil {
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
	c.bus.metrics.handled(c.spec.Name, d.typ, outcome, time.Since(d.start))
}

// pipeline holds the messages whose handler has returned but whose
// deferred effects are not all stored yet, and settles them in order.
type pipeline struct {
	c       *Consumer
	queue   chan *delivery
	stopped chan struct{}
	mu      sync.Mutex
	waiting map[uint64]*delivery // by stream sequence
}

func newPipeline(c *Consumer) *pipeline {
	return &pipeline{c: c, queue: make(chan *delivery, pullBatch), stopped: make(chan struct{}), waiting: map[uint64]*delivery{}}
}

// admit registers d unless the same stream message is already waiting.
func (p *pipeline) admit(d *delivery) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.waiting[d.md.Sequence.Stream]; dup {
		return false
	}
	p.waiting[d.md.Sequence.Stream] = d
	return true
}

func (p *pipeline) release(d *delivery) {
	if d.md == nil {
		return
	}
	p.mu.Lock()
	delete(p.waiting, d.md.Sequence.Stream)
	p.mu.Unlock()
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

// keepAlive tells JetStream that messages waiting long for their effects
// are still in progress, so that they are not redelivered meanwhile.
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

func (c *Consumer) deadLetter(ctx context.Context, m jetstream.Msg, md *jetstream.MsgMetadata, delivered uint64, reason string) error {
	dl := events.DeadLetter{Consumer: c.spec.Name, Reason: reason, Subject: m.Subject(), Deliveries: delivered, Data: m.Data(), Headers: map[string]string{}}
	if md != nil {
		dl.Stream, dl.Sequence = md.Stream, md.Sequence.Stream
	}
	for k := range m.Headers() {
		dl.Headers[k] = m.Headers().Get(k)
	}
	id := events.DeterministicID("deadletter", c.spec.Name, dl.Stream, fmt.Sprint(dl.Sequence))
	e, err := events.NewWithID(id, events.TypeEventDeadLettered, "/natsbus/"+c.spec.Name, m.Subject(), dl)
	if err != nil {
		return err
	}
	if orig := m.Headers().Get("ce-id"); orig != "" {
		e.SetExtension(events.ExtCausationID, orig)
	}
	if err := c.bus.Publish(ctx, events.DeadLetterSubject(c.spec.Name), e); err != nil {
		return err
	}
	c.bus.metrics.deadLettered(c.spec.Name)
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
