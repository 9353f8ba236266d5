// Package events is the contract between Flotilla's daemons: the catalogue of
// CloudEvent types with their subjects and streams, the payload types, the
// envelope encoding (CloudEvents 1.0, binary content mode on NATS), the
// Publisher/Subscriber ports and the handler-outcome error helpers.
//
// It imports neither nats.go nor client-go nor any daemon; events/natsbus is
// the only package that talks to NATS.
package events
