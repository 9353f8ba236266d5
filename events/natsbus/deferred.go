package natsbus

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
)

// PublishDeferred implements events.DeferringPublisher for handlers run by
// Consumer.Run: it sends e and returns without waiting for JetStream's ack,
// and the consumer acknowledges the handled message once every event
// deferred this way is stored. A failed asynchronous publish is retried
// with the same Nats-Msg-Id (see redo). Events deferred by one handler are
// stored in the order they were published, after those deferred before
// them on this Bus.
func (b *Bus) PublishDeferred(ctx context.Context, subj string, e events.Event) error {
	bt, _ := ctx.Value(batchKey{}).(*batch)
	if bt == nil {
		return b.Publish(ctx, subj, e)
	}
	msg, err := b.message(subj, e)
	if err != nil {
		return err
	}
	b.pubMu.Lock()
	b.pubSeq++
	seq := b.pubSeq
	f, err := b.js.PublishMsgAsync(msg, jetstream.WithStallWait(asyncStallWait))
	if err == nil {
		b.latest[subj] = seq
	}
	b.pubMu.Unlock()
	if err != nil {
		b.metrics.published(e.Type(), "error")
		return fmt.Errorf("publish %s on %s: %w", e.Type(), subj, err)
	}
	bt.add(&deferred{msg: msg, typ: e.Type(), seq: seq, fut: f})
	return nil
}

var _ events.DeferringPublisher = (*Bus)(nil)

// batchKey carries the *batch of the message being handled in the handler's context.
type batchKey struct{}

// batch is what one handler call published with PublishDeferred.
type batch struct {
	mu   sync.Mutex
	pubs []*deferred
}

func (bt *batch) add(d *deferred) {
	bt.mu.Lock()
	bt.pubs = append(bt.pubs, d)
	bt.mu.Unlock()
}

func (bt *batch) items() []*deferred {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	return bt.pubs
}

// deferred is one event sent and not yet known stored.
type deferred struct {
	msg *nats.Msg
	typ string
	seq uint64
	fut jetstream.PubAckFuture
}

// await waits until d is stored. A failed publish is retried (redo); await
// returns false only if ctx ends first.
func (b *Bus) await(ctx context.Context, d *deferred) bool {
	select {
	case <-d.fut.Ok():
		b.stored(d)
		return true
	case err := <-d.fut.Err():
		return b.redo(ctx, d, err)
	case <-ctx.Done():
		return false
	}
}

// stored records that d is in its stream.
func (b *Bus) stored(d *deferred) {
	b.metrics.published(d.typ, "ok")
	b.pubMu.Lock()
	if b.latest[d.msg.Subject] == d.seq {
		delete(b.latest, d.msg.Subject)
	}
	b.pubMu.Unlock()
}

// redo stores an event whose asynchronous publish failed (ack timeout,
// disconnection, a refusal). It holds pubMu, so no deferred event is sent
// meanwhile, and first waits for every event already sent to be
// acknowledged or failed: nothing sent before the retry can land after it.
// If a later event was published on the same subject, that one is the
// subject's current state (stored, or retried itself as the newest), and
// storing this one now would put an older state on top: it is skipped.
// Otherwise the very same message (same Nats-Msg-Id: if the first attempt
// was in fact stored, JetStream drops the copy) is published synchronously
// until it is stored or ctx ends.
func (b *Bus) redo(ctx context.Context, d *deferred, cause error) bool {
	subj := d.msg.Subject
	log := b.log.With(zap.String("subject", subj), zap.String("event_type", d.typ))
	log.Warn("publish not acknowledged; retrying", zap.Error(cause))
	b.metrics.published(d.typ, "error")
	b.pubMu.Lock()
	defer b.pubMu.Unlock()
	select {
	case <-b.js.PublishAsyncComplete():
	case <-ctx.Done():
		return false
	}
	if b.latest[subj] != d.seq {
		log.Info("a newer event on the subject supersedes the failed one")
		return true
	}
	wait := 100 * time.Millisecond
	for {
		_, err := b.js.PublishMsg(ctx, d.msg)
		if err == nil {
			delete(b.latest, subj)
			b.metrics.published(d.typ, "ok")
			log.Info("publish retried and stored")
			return true
		}
		b.metrics.published(d.typ, "error")
		log.Warn("publish retry failed", zap.Duration("next_in", wait), zap.Error(err))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return false
		}
		wait = min(wait*2, 5*time.Second)
	}
}
