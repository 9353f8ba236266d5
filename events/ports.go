package events

import "context"

// Handler handles one event. Its return value is the acknowledgement
// (see errors.go): nil acks; Permanent dead-letters and terminates;
// RetryAfter redelivers after the delay; any other error redelivers with
// backoff up to the consumer's MaxDeliver. Handlers must be idempotent:
// delivery is at least once.
type Handler func(ctx context.Context, e Event) error

// Publisher stores events on the bus. Publish returns once the event is
// stored; the event id is the de-duplication key.
type Publisher interface {
	Publish(ctx context.Context, subject string, e Event) error
}

// DeferringPublisher is a Publisher that can also publish an effect of the
// event a Handler is handling without waiting for it to be stored.
//
// PublishDeferred, given the context a consumer handed its Handler, sends e
// and returns at once; the consumer acknowledges the handled event only
// once every event its handler deferred is stored (one that fails is
// retried, under its own id, until it is), so "an input is acknowledged
// only after its effects are stored" still holds while the handler moves on
// to the next input. Events deferred by one handler are stored in the order
// they were deferred. Given any other context it is Publish. An error means
// e could not be sent at all (it does not encode, the connection is
// closed); the handler returns it as it would a failed Publish. Defer
// before the handler returns: an event deferred later is not waited for.
type DeferringPublisher interface {
	Publisher
	PublishDeferred(ctx context.Context, subject string, e Event) error
}

// PublishEffect publishes e, an effect of the event the calling Handler is
// handling: deferred when pub is a DeferringPublisher (the bus), stored
// before returning otherwise (a recording publisher in tests, say).
func PublishEffect(ctx context.Context, pub Publisher, subject string, e Event) error {
	if d, ok := pub.(DeferringPublisher); ok {
		return d.PublishDeferred(ctx, subject, e)
	}
	return pub.Publish(ctx, subject, e)
}
