package natsbus

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// Refused reports whether err is JetStream's refusal of a publish (an API
// error, such as a full stream's), which publishing the same event again
// would meet too, as opposed to an answer that never came (a timeout, a
// lost connection, no JetStream yet while a restarted server restores its
// streams), after which the event may or may not be stored and publishing
// it again is safe (JetStream keeps one copy of an event id).
func Refused(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api)
}
