package natsbus

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flotilla-io/flotilla/events"
)

// Instances reads every registered instance and held lease, and the
// partition count (0 when no instance has started).
func (b *Bus) Instances(ctx context.Context) ([]events.InstanceRecord, []events.LeaseRecord, int, error) {
	var regs []events.InstanceRecord
	var leases []events.LeaseRecord
	n := 0
	if kv, err := b.js.KeyValue(ctx, SettingsBucket); err == nil {
		if e, err := kv.Get(ctx, partitionsKey); err == nil {
			n, _ = strconv.Atoi(string(e.Value()))
		}
	}
	if kv, err := b.js.KeyValue(ctx, InstancesBucket); err == nil {
		if regs, err = records[events.InstanceRecord](ctx, kv, ">"); err != nil {
			return nil, nil, 0, err
		}
	}
	if kv, err := b.js.KeyValue(ctx, LeasesBucket); err == nil {
		es, err := entries(ctx, kv, ">")
		if err != nil {
			return nil, nil, 0, err
		}
		for _, e := range es {
			daemon, work, _ := strings.Cut(e.Key(), ".")
			if strings.HasPrefix(work, slotWork) {
				continue
			}
			leases = append(leases, events.LeaseRecord{Daemon: daemon, Work: work, Instance: string(e.Value())})
		}
	}
	return regs, leases, n, nil
}

// records decodes the JSON values of the keys matching filter.
func records[T any](ctx context.Context, kv jetstream.KeyValue, filter string) ([]T, error) {
	es, err := entries(ctx, kv, filter)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(es))
	for _, e := range es {
		var r T
		if json.Unmarshal(e.Value(), &r) == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// entries reads the current value of every key matching filter.
func entries(ctx context.Context, kv jetstream.KeyValue, filter string) ([]jetstream.KeyValueEntry, error) {
	w, err := kv.WatchFiltered(ctx, []string{filter}, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	// Stopping deletes the watch's consumer, which a credential without
	// that right waits on until the request times out: not here.
	defer func() { go func() { _ = w.Stop() }() }()
	var out []jetstream.KeyValueEntry
	for {
		select {
		case e := <-w.Updates():
			if e == nil {
				return out, nil
			}
			out = append(out, e)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// MaxInstances is how many instances of one daemon run at once: each holds
// one slot, and its durable consumers are the slot's (SlotConsumer).
const MaxInstances = 8

// SlotConsumer names the durable consumer of purpose base
// ("schedulerd-policy") that the instance holding slot reads through. Every
// instance of a partitioned daemon reads every event into its state, so
// each has consumers of its own; they are named by slot, not by instance,
// so that credentials can list them (a consumer name is one subject token:
// NATS cannot grant a prefix of one), a restarted instance resumes where a
// dead one left off, and slot 0 keeps the names of a single instance. This
// is the one place those names are made.
func SlotConsumer(base string, slot int) string {
	if slot == 0 {
		return base
	}
	return base + "-" + strconv.Itoa(slot)
}

// SlotInactivity is how long the consumers of slots above 0 outlive their
// last reader; slot 0's are the standing ones and stay.
const SlotInactivity = time.Hour
