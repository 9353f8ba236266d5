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
