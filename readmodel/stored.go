package readmodel

import (
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// Stored is one event as read back from a stream.
type Stored struct {
	Event events.Event
	// Sequence is the event's place in its stream; Time, when the stream
	// stored it.
	Sequence uint64
	Time     time.Time
	// Err is set when the stored message is not a valid CloudEvent; such
	// events are skipped.
	Err error
}

// is reports whether m is a valid event of type t.
func (m Stored) is(t events.Type) bool { return m.Err == nil && events.Type(m.Event.Type()) == t }
