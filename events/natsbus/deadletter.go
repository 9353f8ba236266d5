package natsbus

import (
	"context"
	"errors"
	"fmt"

	"github.com/flotilla-io/flotilla/events"
)

// deadLetter publishes d's message as a dead letter with the reason. Its id
// (sent as Nats-Msg-Id) names what failed: for a handler's failure, this
// consumer and the stored message; for an unreadable message, the stored
// message alone, as every consumer it reaches fails it alike, so
// JetStream keeps one dead letter of it however many consumers meet it
// (within the stream's duplicate window; unreadableDeadLettered covers
// the rest).
func (c *Consumer) deadLetter(ctx context.Context, d *delivery, reason string) error {
	m, md := d.m, d.md
	dl := events.DeadLetter{Consumer: c.spec.Name, Reason: reason, Subject: m.Subject(), Deliveries: d.delivered, Data: m.Data(), Headers: map[string]string{}}
	if md != nil {
		dl.Stream, dl.Sequence = md.Stream, md.Sequence.Stream
	}
	for k := range m.Headers() {
		dl.Headers[k] = m.Headers().Get(k)
	}
	id := events.DeterministicID("deadletter", c.spec.Name, dl.Stream, fmt.Sprint(dl.Sequence))
	if d.unreadable {
		id = events.DeterministicID("deadletter", "unreadable", dl.Stream, fmt.Sprint(dl.Sequence))
		if done, err := c.bus.unreadableDeadLettered(ctx, dl.Stream, dl.Sequence, c.spec.Name); err != nil || done {
			return err
		}
	}
	publish := func() error {
		e, err := events.NewWithID(id, events.TypeEventDeadLettered, "/natsbus/"+c.spec.Name, m.Subject(), dl)
		if err != nil {
			return err
		}
		if orig := m.Headers().Get("ce-id"); orig != "" {
			e.SetExtension(events.ExtCausationID, orig)
		}
		return c.bus.Publish(ctx, events.DeadLetterSubject(c.spec.Name), e)
	}
	err := publish()
	if errors.Is(err, ErrTooLarge) {
		// Its data, base64 in the dead letter, made it too large: the
		// dead letter says where the message is instead.
		dl.Reason += fmt.Sprintf(" (its data, %d bytes, is left out of this dead letter, which could not hold it: it is in stream %s at sequence %d)", len(dl.Data), dl.Stream, dl.Sequence)
		dl.Data = nil
		err = publish()
	}
	if err != nil {
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
