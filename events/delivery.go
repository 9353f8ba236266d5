package events

import "context"

// Delivery says where a consumed event is stored and how often it was
// delivered. The consumer hands it to the Handler in its context
// (DeliveryOf), so that a handler can tell a late redelivery from new
// input: JetStream delivers a message a crashed process had taken again
// only after the consumer's AckWait, while messages published meanwhile
// are delivered at once, so a redelivered message can be older than what
// its handler has already handled (DESIGN.md §4, stale redeliveries).
type Delivery struct {
	Stream string
	// Subject is the subject the event was published on, the one the
	// publisher's permissions were checked against.
	Subject string
	// Sequence is the event's position in Stream: stream order is the
	// order it was published in.
	Sequence uint64
	// Delivered counts the deliveries, this one included: above 1 it is a
	// redelivery. First deliveries come in stream order.
	Delivered uint64
}

type deliveryKey struct{}

// WithDelivery returns ctx carrying d (the consumer's side).
func WithDelivery(ctx context.Context, d Delivery) context.Context {
	return context.WithValue(ctx, deliveryKey{}, d)
}

// DeliveryOf returns the delivery ctx carries; false when the event was not
// handed over by a consumer (a test calling a handler, say).
func DeliveryOf(ctx context.Context) (Delivery, bool) {
	d, ok := ctx.Value(deliveryKey{}).(Delivery)
	return d, ok
}
