package events

import (
	"errors"
	"time"
)

// The handler-outcome contract, applied in one place (natsbus):
//   nil            -> Ack
//   Permanent(err) -> Term, and the event goes to the dead-letter subject with the reason
//   RetryAfter(..) -> NakWithDelay
//   any other err  -> Nak (redelivered with the consumer's backoff, up to MaxDeliver;
//                     after the last attempt it is dead-lettered too)

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as one that redelivery cannot fix (bad payload, invalid
// object). The event is terminated and dead-lettered with err as the reason.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err (or an error it wraps) was marked Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type retryError struct {
	err   error
	delay time.Duration
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

// RetryAfter asks for redelivery after d (a member cluster is unreachable, a
// dependency is not there yet).
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryError{err, d}
}

// RetryDelay returns the delay asked for by RetryAfter, if any.
func RetryDelay(err error) (time.Duration, bool) {
	var r *retryError
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}
