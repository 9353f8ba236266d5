package natsbus

import (
	"context"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
)

// Unreadable is a stored row that could not be decoded: not a CloudEvent,
// or a CloudEvent whose JSON data is not JSON.
type Unreadable struct {
	Sequence uint64
	Err      error
}

// String names the row and why it is unreadable, for warnings.
func (u Unreadable) String() string {
	return fmt.Sprintf("sequence %d is unreadable: %v", u.Sequence, u.Err)
}

// passOverUnreadable replaces in ms, the latest message of every subject of
// stream, each unreadable message by the newest readable one of the same
// subject, with Unreadable set to say what it passed over; a subject with
// no readable message keeps its unreadable one (Err set). One bad row must
// not make an object vanish from every reader: it is dead-lettered by the
// consumers that meet it, and readers see the state before it. The result
// stays in stream order.
func (b *Bus) passOverUnreadable(ctx context.Context, stream string, ms []Message) ([]Message, error) {
	replaced := false
	for i, m := range ms {
		if m.Err == nil {
			continue
		}
		bad := Unreadable{Sequence: m.Sequence, Err: m.Err}
		good, found, err := b.newestReadable(ctx, stream, m.Subject, m.Sequence)
		if err != nil {
			return ms, err
		}
		if !found {
			b.log.Warn("unreadable latest row, and no readable row before it", zap.String("stream", stream), zap.String("subject", m.Subject),
				zap.Uint64("sequence", m.Sequence), zap.Error(m.Err))
			continue
		}
		b.log.Warn("unreadable latest row passed over for the newest readable one", zap.String("stream", stream), zap.String("subject", m.Subject),
			zap.Uint64("sequence", m.Sequence), zap.Uint64("read_sequence", good.Sequence), zap.Error(m.Err))
		good.Unreadable = &bad
		ms[i], replaced = good, true
	}
	if replaced {
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].Sequence < ms[j].Sequence })
	}
	return ms, nil
}

// newestReadable returns the newest readable message of subject stored
// before sequence before. Unreadable rows are rare, so it reads the
// subject's history (bounded by the stream's MaxMsgsPerSubject) rather than
// keeping an index.
func (b *Bus) newestReadable(ctx context.Context, stream, subject string, before uint64) (Message, bool, error) {
	history, err := b.readAll(ctx, stream, jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy, FilterSubjects: []string{subject}})
	if err != nil {
		return Message{}, false, err
	}
	for i := len(history) - 1; i >= 0; i-- {
		if m := history[i]; m.Err == nil && m.Sequence < before {
			return m, true, nil
		}
	}
	return Message{}, false, nil
}

// unreadableDeadLettered reports whether a dead letter of the unreadable
// message at sequence of stream is stored already: a consumer created
// after the duplicate window of the first dead letter (a cluster that
// joins later and starts at the latest message of every subject) must not
// add a second one. Any dead letter of that message will do: no consumer
// can read it, so every one dead-letters it for that reason. Unreadable messages are rare, so it reads the
// dead-letter stream rather than keeping an index. A bus with a Reader
// (a scoped credential) reads only the dead letters of its own consumer,
// all it may read.
func (b *Bus) unreadableDeadLettered(ctx context.Context, stream string, sequence uint64, consumer string) (bool, error) {
	filter := events.AllDeadLetter
	if b.reader != "" {
		filter = events.DeadLetterSubject(consumer)
	}
	ms, err := b.readAll(ctx, events.StreamDeadLetter, jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy, FilterSubjects: []string{filter}})
	if err != nil {
		return false, err
	}
	for _, m := range ms {
		var dl events.DeadLetter
		if m.Err == nil && events.Decode(m.Event, &dl) == nil && dl.Stream == stream && dl.Sequence == sequence {
			return true, nil
		}
	}
	return false, nil
}
