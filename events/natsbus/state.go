package natsbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamState is what a stream holds, read from the server without
// reading a message.
type StreamState struct {
	Messages  uint64    // messages stored
	Subjects  uint64    // distinct subjects holding at least one message
	FirstSeq  uint64    // sequence of the oldest message kept
	FirstTime time.Time // storage time of the oldest message kept
	LastSeq   uint64    // sequence of the newest message
}

// StreamState returns the state of stream.
func (b *Bus) StreamState(ctx context.Context, stream string) (StreamState, error) {
	st, err := b.js.Stream(ctx, stream)
	if err != nil {
		return StreamState{}, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return StreamState{}, err
	}
	s := info.State
	return StreamState{Messages: s.Msgs, Subjects: s.NumSubjects, FirstSeq: s.FirstSeq, FirstTime: s.FirstTime, LastSeq: s.LastSeq}, nil
}

// ErrConsumerMissing: the durable consumer does not exist (yet): the daemon
// that binds it has never run against this NATS.
var ErrConsumerMissing = errors.New("consumer not found")

// ConsumerIdle reports whether the durable consumer name of stream exists
// and has nothing waiting or unacknowledged; the error says why not
// (ErrConsumerMissing when it does not exist).
func (b *Bus) ConsumerIdle(ctx context.Context, stream, name string) error {
	c, err := b.js.Consumer(ctx, stream, name)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("consumer %s: %w", name, ErrConsumerMissing)
	}
	if err != nil {
		return fmt.Errorf("consumer %s: %w", name, err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("consumer %s: %w", name, err)
	}
	if info.NumPending > 0 || info.NumAckPending > 0 {
		return fmt.Errorf("consumer %s busy: %d waiting, %d unacknowledged", name, info.NumPending, info.NumAckPending)
	}
	return nil
}

// StorageTimes calls fn with the subject and storage time of every message
// of stream matching filter, from sequence from up to and including until,
// reading metadata only (the data is not decoded). It returns when until is
// reached, fn returns false, or nothing more arrives for five seconds.
func (b *Bus) StorageTimes(ctx context.Context, stream, filter string, from, until uint64, fn func(subject string, stored time.Time) bool) error {
	c, err := b.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from})
	if err != nil {
		return err
	}
	for {
		batch, err := c.Fetch(1000, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			if !fn(m.Subject(), md.Timestamp) || md.Sequence.Stream >= until {
				return nil
			}
		}
		if n == 0 {
			return fmt.Errorf("%s: nothing read past sequence %d", stream, from)
		}
	}
}
