package natsbus

import (
	"context"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/sealing"
)

// SealKey returns the newest credentials key healthd or executord
// announced (events.SealKeySubject), for sealing to it; nil when none is
// announced yet (a missing stream counts as none).
func (b *Bus) SealKey(ctx context.Context) (*sealing.Key, error) {
	ms, err := b.LatestPerSubject(ctx, events.StreamPolicy, events.SealKeySubject)
	if err != nil && err != ErrStreamMissing {
		return nil, err
	}
	for i := len(ms) - 1; i >= 0; i-- {
		var k events.SealKey
		if ms[i].Err == nil && events.Decode(ms[i].Event, &k) == nil {
			if key, ok := sealing.Announced(k); ok {
				return key, nil
			}
		}
	}
	return nil, nil
}
