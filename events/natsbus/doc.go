// Package natsbus is the only package that imports nats.go: it connects to
// NATS, creates the JetStream streams of the event catalogue, publishes
// events in CloudEvents binary content mode with Nats-Msg-Id = event id,
// runs durable pull consumers with the ack contract of events.Permanent /
// events.RetryAfter, dead-letters what cannot be handled, and reads history
// (latest per subject, replay, watch) for state rebuilds and the CLI.
package natsbus
