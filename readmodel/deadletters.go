package readmodel

import (
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// DeadLetter is one dead letter as `get deadletters` lists it: what a
// consumer gave up on, why, and when.
type DeadLetter struct {
	events.DeadLetter
	// At is when the dead letter was stored.
	At time.Time `json:"deadLetteredAt"`
}

// DeadLetters returns the dead letters among ms (every message of
// events.StreamDeadLetter, oldest first), in that order. A stored message
// that is not a dead letter is left out.
func DeadLetters(ms []Stored) []DeadLetter {
	var out []DeadLetter
	for _, m := range ms {
		var dl events.DeadLetter
		if m.is(events.TypeEventDeadLettered) && events.Decode(m.Event, &dl) == nil {
			out = append(out, DeadLetter{DeadLetter: dl, At: m.Time})
		}
	}
	return out
}
