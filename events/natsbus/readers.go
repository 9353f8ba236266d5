package natsbus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// readerPrefix starts the name of every consumer a credential reads
// through; no daemon names a durable consumer so (a test holds them to it).
const readerPrefix = "read-"

// readerSlots is how many consumers of one stream a credential may read
// through at once: reads of one process take turns on them, and a few
// processes sharing a credential (a CLI beside the console) rarely meet.
const readerSlots = 4

// ReaderNames are the names of the short-lived consumers a restricted
// credential reads, replays and watches through, derived from its user
// key: the only consumers its grant lets it create, pull from and delete
// (besides its own durable ones), so no reader can re-filter, drain or
// acknowledge for a daemon's consumer or another credential's reads. This
// is the one place that names them (DESIGN.md decision 26).
func ReaderNames(user string) []string {
	tag := user
	if len(tag) > 12 {
		tag = tag[len(tag)-12:] // 60 bits of the key: distinct per credential
	}
	out := make([]string, readerSlots)
	for i := range out {
		out[i] = fmt.Sprintf("%s%s-%d", readerPrefix, tag, i)
	}
	return out
}

// readerPool hands out a credential's reader names per stream, one read
// or watch at a time on each (a consumer name is unique in its stream).
type readerPool struct {
	names []string
	mu    sync.Mutex
	free  map[string]chan string
}

func newReaderPool(names []string) *readerPool {
	return &readerPool{names: names, free: map[string]chan string{}}
}

// take returns a name of stream no other read of this process uses, and
// the function that gives it back; it waits while all are in use.
func (p *readerPool) take(ctx context.Context, stream string) (string, func(), error) {
	p.mu.Lock()
	ch, ok := p.free[stream]
	if !ok {
		// In an order of its own, so processes sharing the credential
		// start on different names.
		ch = make(chan string, len(p.names))
		for _, i := range rand.Perm(len(p.names)) {
			ch <- p.names[i]
		}
		p.free[stream] = ch
	}
	p.mu.Unlock()
	select {
	case name := <-ch:
		return name, func() { ch <- name }, nil
	case <-ctx.Done():
		return "", nil, ctx.Err()
	}
}

// subscribeNamed is Subscribe for a restricted credential, which may not
// create the ordered consumers Subscribe uses (their names change at every
// reset): it follows stream through one of its reader names, a consumer
// that lives as long as the subscription and is made again, from the
// sequence after the last message handed on, when it is lost.
func (b *Bus) subscribeNamed(ctx context.Context, stream string, filters []string, fromLatest bool) (*Subscription, error) {
	name, release, err := b.readers.take(ctx, stream)
	if err != nil {
		return nil, err
	}
	from := uint64(1)
	if fromLatest {
		// From the sequence after the last stored, fixed now: whatever is
		// stored once Subscribe returns is past it.
		err := b.untilAnswered(ctx, "watch "+stream, transient, func() error {
			st, err := b.StreamState(ctx, stream)
			from = st.LastSeq + 1
			return err
		})
		if err != nil {
			release()
			return nil, watchError(stream, err)
		}
	}
	open := func(from uint64) (jetstream.MessagesContext, error) {
		cfg := jetstream.ConsumerConfig{Name: name, AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true,
			InactiveThreshold: 30 * time.Second, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from, FilterSubjects: filters}
		if len(filters) == 1 {
			cfg.FilterSubject, cfg.FilterSubjects = filters[0], nil
		}
		var c jetstream.Consumer
		err := b.untilAnswered(ctx, "watch "+stream, transient, func() error {
			actx, cancel := context.WithTimeout(ctx, attempt)
			defer cancel()
			// A consumer of this name left by a crash or by the one lost
			// goes first: it would not start where this one must.
			if err := b.js.DeleteConsumer(actx, stream, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
				return err
			}
			var err error
			c, err = b.js.CreateConsumer(actx, stream, cfg)
			return err
		})
		if err != nil {
			return nil, watchError(stream, err)
		}
		return b.follow(ctx, stream, c)
	}
	it, err := open(from)
	if err != nil {
		release()
		return nil, err
	}
	s := &Subscription{it: it, done: ctx.Done(), reopen: open, last: from - 1}
	context.AfterFunc(ctx, func() {
		s.stop()
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), attempt)
		defer cancel()
		_ = b.js.DeleteConsumer(dctx, stream, name)
		release()
	})
	return s, nil
}

// watchError says which stream a watch could not follow.
func watchError(stream string, err error) error {
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return ErrStreamMissing
	}
	return fmt.Errorf("watch %s: %w", stream, err)
}
