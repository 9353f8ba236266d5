package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// bucket opens a KV bucket, creating it with ttl if missing (0: no TTL).
func (b *Bus) bucket(ctx context.Context, name string, ttl time.Duration) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := b.whileForming(ctx, "bucket "+name, func() (err error) {
		kv, err = b.js.KeyValue(ctx, name)
		if !errors.Is(err, jetstream.ErrBucketNotFound) {
			return err
		}
		kv, err = b.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, History: 1, TTL: ttl, Storage: jetstream.FileStorage, Replicas: b.replicas})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = b.js.KeyValue(ctx, name)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", name, err)
	}
	return kv, nil
}

// fixPartitions returns the partition count: the one stored, or want (or
// DefaultPartitions) stored by a create-only write on the first start. An
// explicit want that differs from the stored count is an error.
func (b *Bus) fixPartitions(ctx context.Context, want int) (int, error) {
	if want < 0 {
		return 0, fmt.Errorf("--partitions %d: must be positive", want)
	}
	kv, err := b.bucket(ctx, SettingsBucket, 0)
	if err != nil {
		return 0, err
	}
	first := want
	if first == 0 {
		first = DefaultPartitions
	}
	// Asked again while the cluster cannot answer (a node frozen or just
	// restarted at a daemon's start): untilAnswered. A key that exists
	// when created yet is not found when read was created by another
	// instance starting at once and read from a replica not there yet.
	var e jetstream.KeyValueEntry
	retry := func(err error) bool { return transient(err) || errors.Is(err, jetstream.ErrKeyNotFound) }
	err = b.untilAnswered(ctx, "partition count", retry, func() error {
		if _, err := kv.Create(ctx, partitionsKey, []byte(strconv.Itoa(first))); err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
		var err error
		e, err = kv.Get(ctx, partitionsKey)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("partition count: %w", err)
	}
	if e == nil {
		return first, nil
	}
	n, err := strconv.Atoi(string(e.Value()))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("partition count: bucket %s key %s holds %q, not a positive number", SettingsBucket, partitionsKey, e.Value())
	}
	if want != 0 && want != n {
		return 0, fmt.Errorf("--partitions %d: this system was set up with %d partitions (bucket %s, key %s), fixed at its first start", want, n, SettingsBucket, partitionsKey)
	}
	return n, nil
}
