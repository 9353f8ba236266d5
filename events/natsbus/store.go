package natsbus

import "github.com/flotilla-io/flotilla/events"

// jetStreamStore is the JetStream storage limit a Flotilla server gets:
// nats-server's own (three quarters of the disk free under dir), raised to
// what the catalogue's streams reserve (their caps and a quarter more)
// when that is less. JetStream reserves each stream's cap up front, so on
// a disk with less than about 34 GB free every start was refused, though
// the caps are limits, not usage (a stream holds a few KB per object). On
// a disk that does fill, writes are refused with the server's error, as
// they would be at the caps.
func jetStreamStore(dir string) int64 {
	var caps int64
	for _, s := range events.Streams {
		caps += s.MaxBytes
	}
	need := caps + caps/4
	if free, ok := freeStore(dir); ok && free >= need {
		return free
	}
	return need
}
