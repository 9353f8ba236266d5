// Package clock is the time the daemons run on. It is injected (every
// daemon's Deps has a Clock) so that tests of tolerations, grace periods,
// backoff and taint delays move time instead of sleeping.
package clock

import "time"

// Clock is a daemon's source of time. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now is the time a daemon stamps on what it publishes and compares
	// with what it reads (since, timeAdded, grace periods, backoff).
	Now() time.Time
	// NewTicker paces a daemon's loops (probes, resyncs, failover ticks),
	// as time.NewTicker does; the caller stops it.
	NewTicker(d time.Duration) Ticker
}

// Ticker delivers ticks on C until stopped, as a time.Ticker does.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real is the system clock.
var Real Clock = Func(time.Now)

// Func is a clock whose Now is the function and whose tickers are real
// ones: a test moves Now while the daemon's loops keep their real pace
// (a loop's cadence is configured short in tests, its decisions read Now).
type Func func() time.Time

// Now calls f.
func (f Func) Now() time.Time { return f() }

// NewTicker returns a real ticker.
func (Func) NewTicker(d time.Duration) Ticker { return ticker{time.NewTicker(d)} }

// OrReal returns c, or Real when c is nil (a Deps without a Clock).
func OrReal(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

type ticker struct{ t *time.Ticker }

func (t ticker) C() <-chan time.Time { return t.t.C }
func (t ticker) Stop()               { t.t.Stop() }
