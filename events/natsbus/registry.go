package natsbus

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
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
	es, err := b.entries(ctx, InstancesBucket, ">")
	if err != nil {
		return nil, nil, 0, err
	}
	for _, e := range es {
		var r events.InstanceRecord
		if json.Unmarshal(e.Value(), &r) == nil {
			regs = append(regs, r)
		}
	}
	if es, err = b.entries(ctx, LeasesBucket, ">"); err != nil {
		return nil, nil, 0, err
	}
	for _, e := range es {
		daemon, work, _ := strings.Cut(e.Key(), ".")
		if !strings.HasPrefix(work, slotWork) {
			leases = append(leases, events.LeaseRecord{Daemon: daemon, Work: work, Instance: string(e.Value())})
		}
	}
	return regs, leases, n, nil
}

// bucketKeys lists the keys of bucket matching filter from its stream's
// subjects: no consumer, so a credential reading through named consumers
// only (DESIGN.md decision 26) can list them too. A missing bucket has none.
func (b *Bus) bucketKeys(ctx context.Context, bucket, filter string) ([]string, error) {
	prefix := "$KV." + bucket + "."
	st, err := b.js.Stream(ctx, "KV_"+bucket)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(prefix+filter))
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		out = append(out, strings.TrimPrefix(subj, prefix))
	}
	slices.Sort(out)
	return out, nil
}

// entries reads the current value of every key of bucket matching filter
// (a key deleted or expired meanwhile is left out).
func (b *Bus) entries(ctx context.Context, bucket, filter string) ([]jetstream.KeyValueEntry, error) {
	keys, err := b.bucketKeys(ctx, bucket, filter)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	kv, err := b.js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, err
	}
	var out []jetstream.KeyValueEntry
	for _, k := range keys {
		e, err := getKey(ctx, kv, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
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

// EverySlot lists the consumers of every slot an instance may hold, as of
// gives them for one slot: a daemon's consumers for credentials.
func EverySlot(of func(slot int) []ConsumerSpec) []ConsumerSpec {
	var out []ConsumerSpec
	for slot := range MaxInstances {
		out = append(out, of(slot)...)
	}
	return out
}

// SlotInactivity is how long the consumers of slots above 0 outlive their
// last reader; slot 0's are the standing ones and stay.
const SlotInactivity = time.Hour

// Live lists the registered instances of this daemon as the last round
// that could read them found them (nil before the first), sorted. The
// slice is shared: read it, do not change it.
func (in *Instance) Live() []string {
	if p := in.peers.Load(); p != nil {
		return *p
	}
	return nil
}

// quiesce lets the daemon finish what it did for the work being given up
// before the leases go (InstanceOptions.Quiesce): schedulerd returns once
// its running decision is over and every event published is stored, so
// that the instance taking the work never decides again what this one
// decided (an orderly hand-off: a rebalance, a leave). It waits at most a
// third of a lease, so the leases still held are renewed in time.
func (in *Instance) quiesce(ctx context.Context) {
	if in.opts.Quiesce == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, quiesceBudget(in.lease))
	defer cancel()
	in.opts.Quiesce(ctx)
}

// quiesceBudget is the longest quiesce waits.
func quiesceBudget(lease time.Duration) time.Duration { return max(lease/3, 100*time.Millisecond) }

// live lists the registered instances of this daemon, sorted. A key whose
// last operation is a delete (an instance that left) is not one: its
// marker stays on the stream's subject until the TTL, and counting it
// would keep a share (with few items, all of one) for an instance gone.
func (in *Instance) live(ctx context.Context) ([]string, error) {
	es, err := in.bus.entries(ctx, InstancesBucket, in.opts.Daemon+".>")
	keys := make([]string, 0, len(es))
	for _, e := range es {
		if e.Operation() == jetstream.KeyValuePut {
			keys = append(keys, strings.TrimPrefix(e.Key(), in.opts.Daemon+"."))
		}
	}
	return keys, err
}

// Peers names the other live instances of this instance's daemon.
func (in *Instance) Peers(ctx context.Context) ([]string, error) {
	live, err := in.live(ctx)
	return slices.DeleteFunc(live, func(n string) bool { return n == in.opts.Instance }), err
}
