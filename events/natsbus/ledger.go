package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LedgerBucket holds what schedulerd instances have reserved of each
// member cluster's capacity (DESIGN.md decision 28): a key per cluster,
// written only by compare-and-set on the key's revision. Only schedulerd's
// credentials reach it.
const LedgerBucket = "flotilla-ledger"

// LedgerStream is the bucket's stream, which a ledger's watch follows.
const LedgerStream = "KV_" + LedgerBucket

// ErrLedgerConflict: the cluster's entry is no longer at the revision a
// write named (another instance wrote it since, or it was created or
// expired meanwhile).
var ErrLedgerConflict = errors.New("ledger entry changed")

// Ledger is the shared capacity ledger. The values are opaque here: the
// rule of what they hold and when a write is allowed is schedulerd's.
type Ledger struct {
	bus *Bus
	kv  jetstream.KeyValue
}

// OpenLedger opens the ledger bucket, creating it if missing with ttl: a
// key not written for ttl is dropped (a cluster that left).
func (b *Bus) OpenLedger(ctx context.Context, ttl time.Duration) (*Ledger, error) {
	kv, err := b.bucket(ctx, LedgerBucket, ttl)
	if err != nil {
		return nil, err
	}
	return &Ledger{bus: b, kv: kv}, nil
}

// Fetch reads cluster's entry and its revision; a missing (or expired,
// or deleted) entry is nil at revision 0.
func (l *Ledger) Fetch(ctx context.Context, cluster string) ([]byte, uint64, error) {
	e, err := l.kv.Get(ctx, cluster)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("ledger %s: %w", cluster, err)
	}
	return e.Value(), e.Revision(), nil
}

// Put stores value as cluster's entry if the entry is still at rev (0: if
// there is none) and returns the new revision; ErrLedgerConflict if not.
func (l *Ledger) Put(ctx context.Context, cluster string, value []byte, rev uint64) (uint64, error) {
	var n uint64
	var err error
	if rev == 0 {
		n, err = l.kv.Create(ctx, cluster, value)
	} else {
		n, err = l.kv.Update(ctx, cluster, value, rev)
	}
	if conflict(err) {
		return 0, fmt.Errorf("ledger %s at revision %d: %w", cluster, rev, ErrLedgerConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("ledger %s: %w", cluster, err)
	}
	return n, nil
}

// Watch calls fn with every entry stored, then every change, until ctx is
// done: the cluster, its value (nil when deleted) and its revision.
func (l *Ledger) Watch(ctx context.Context, fn func(cluster string, value []byte, rev uint64)) error {
	prefix := "$KV." + LedgerBucket + "."
	return l.bus.Watch(ctx, LedgerStream, []string{prefix + ">"}, false, func(m Message) {
		value := m.Data
		if op := m.Headers.Get("KV-Operation"); op == "DEL" || op == "PURGE" {
			value = nil
		}
		fn(strings.TrimPrefix(m.Subject, prefix), value, m.Sequence)
	})
}
