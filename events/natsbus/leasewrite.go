package natsbus

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
)

// A round's writes and reads of leases, slots and registrations, each
// bounded (a bucket whose stream has no leader answers nothing), every
// write a compare-and-set that tells a lost reply of its own from someone
// else's value, and the log of a round's failing steps.

// renewal is one lease's renewal: its new revision, or why not.
type renewal struct {
	rev uint64
	err error
}

// renewAll writes every held lease again, and the slot and the
// registration, all at once under ctx.
func (in *Instance) renewAll(ctx context.Context) (map[string]renewal, error) {
	out := make(map[string]renewal, len(in.owned))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w, rev := range in.owned {
		wg.Go(func() {
			nrev, err := in.write(ctx, in.leases, in.leaseKey(w), []byte(in.opts.Instance), rev, in.holdsName)
			mu.Lock()
			out[w] = renewal{nrev, err}
			mu.Unlock()
		})
	}
	registered := in.renewRegistration(ctx)
	wg.Wait()
	return out, registered
}

// report logs the first round of a failing streak of one step, and the
// round in which it succeeds again: an operator sees when an instance
// stopped being sure of its work (renewing) or could not take up free
// work (sharing), and when it could again.
func (in *Instance) report(ctx context.Context, step string, round time.Time, failed error) {
	if ctx.Err() != nil {
		return // stopping: the writes were cut short on purpose
	}
	log := in.bus.log.With(zap.String("daemon", in.opts.Daemon), zap.String("instance", in.opts.Instance))
	since, failing := in.failingSince[step]
	switch {
	case failed != nil && !failing:
		in.failingSince[step] = round
		switch {
		case step != "renewing leases":
			log.Warn("free work not taken up: asked again next round", zap.Error(failed))
		case round.Before(in.validUntil):
			log.Warn("leases not renewed: acting on held work until the lease runs out, then on none until renewed",
				zap.Time("until", in.validUntil), zap.Error(failed))
		default:
			log.Warn("leases not renewed: acting on no work until renewed", zap.Error(failed))
		}
	case failed == nil && failing:
		log.Info(step+" succeeded again", zap.Duration("after", round.Sub(since).Round(time.Millisecond)))
		delete(in.failingSince, step)
	}
}

// write stores value at key if its revision is still rev (0: if absent).
// A conflict whose stored value is this instance's own (ours) is its own
// write whose reply was lost (a node killed, a leader changing): that
// revision is adopted and the write made again. A key expired meanwhile is
// made again; only someone else's value is a conflict.
func (in *Instance) write(ctx context.Context, kv jetstream.KeyValue, key string, value []byte, rev uint64, ours func([]byte) bool) (uint64, error) {
	put := func(rev uint64) (uint64, error) {
		if rev == 0 {
			return kv.Create(ctx, key, value)
		}
		return kv.Update(ctx, key, value, rev)
	}
	for try := 1; ; try++ {
		n, err := put(rev)
		if !conflict(err) {
			return n, err
		}
		e, gerr := getKey(ctx, kv, key)
		switch {
		case errors.Is(gerr, jetstream.ErrKeyNotFound): // expired: an update names a revision gone
			rev = 0
		case gerr != nil: // cannot tell now: not a conflict, the next round asks again
			return 0, gerr
		case !ours(e.Value()):
			return 0, err
		default:
			rev = e.Revision()
		}
		if try == 3 {
			// Ours (or gone) when read, yet refused when written: the reads
			// come from a replica behind the bucket's leader (a node frozen
			// or just back). Not a conflict: the next round asks again.
			return 0, fmt.Errorf("%s: this instance's own, yet its writes are refused (a replica behind the leader?): %v", key, err)
		}
	}
}

// conflict reports a compare-and-set refused because the key holds another
// revision than the one given, or exists when it was to be created.
func conflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)
}

// holdsName reports a lease or slot value naming this instance (names are
// unique among live instances: the registration sees to it).
func (in *Instance) holdsName(v []byte) bool { return string(v) == in.opts.Instance }

// isThisProcess reports a registration record written by this very process,
// not by an earlier one under the same name.
func (in *Instance) isThisProcess(v []byte) bool {
	var r events.InstanceRecord
	return json.Unmarshal(v, &r) == nil && r.Instance == in.opts.Instance && r.Started.Equal(in.started)
}

// claim takes up to need of the items not held by anyone, in their
// order: a wave of need claims at once, and another over the next items
// for those another instance holds (a conflict), until need are taken or
// the items run out. It stops at a claim that fails otherwise (the bucket
// cannot answer: the next round asks again), returning why.
func (in *Instance) claim(ctx context.Context, items []string, need int) (map[string]uint64, error) {
	claimed := map[string]uint64{}
	for len(claimed) < need && len(items) > 0 {
		wave := items[:min(need-len(claimed), len(items))]
		items = items[len(wave):]
		revs, errs := make([]uint64, len(wave)), make([]error, len(wave))
		var wg sync.WaitGroup
		for i, w := range wave {
			wg.Go(func() {
				revs[i], errs[i] = in.write(ctx, in.leases, in.leaseKey(w), []byte(in.opts.Instance), 0, in.holdsName)
			})
		}
		wg.Wait()
		var failed error
		for i, w := range wave {
			switch {
			case errs[i] == nil:
				claimed[w] = revs[i]
			case !conflict(errs[i]): // a conflict: another instance holds it
				failed = cmp.Or(failed, fmt.Errorf("lease %s: %w", w, errs[i]))
			}
		}
		if failed != nil {
			return claimed, failed
		}
	}
	return claimed, nil
}

// readAttempt bounds one read of a coordination bucket. A get is answered
// by any replica of the bucket (a direct get to their queue group), and
// one routed to a frozen node's never is; asked again, another replica
// answers. The freeze e2e's policyd, renewing again, took its partitions
// back 13 s later for want of it.
const readAttempt = time.Second

// getKey reads key from kv in at most three attempts, the next when one
// is not answered.
func getKey(ctx context.Context, kv jetstream.KeyValue, key string) (jetstream.KeyValueEntry, error) {
	var e jetstream.KeyValueEntry
	var err error
	for range 3 {
		actx, cancel := context.WithTimeout(ctx, readAttempt)
		e, err = kv.Get(actx, key)
		cancel()
		if err == nil || !transient(err) || ctx.Err() != nil {
			break
		}
	}
	return e, err
}
