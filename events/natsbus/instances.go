package natsbus

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
)

// Buckets of several instances (DESIGN.md §7). Registrations and leases
// expire with their bucket's TTL unless renewed; the settings never expire.
const (
	InstancesBucket = "flotilla-instances"
	LeasesBucket    = "flotilla-leases"
	SettingsBucket  = "flotilla-settings"
	partitionsKey   = "partitions"
)

// CoordinationBuckets are the buckets every daemon instance reads and
// writes (roles grant them).
var CoordinationBuckets = []string{InstancesBucket, LeasesBucket, SettingsBucket}

// Defaults of several instances: how many partitions the first instance
// fixes, and how long a registration or lease lives without renewal (the
// longest a dead instance's work waits for another owner).
const (
	DefaultPartitions = 16
	DefaultLease      = 10 * time.Second
)

// InstanceOptions are what an instance joins with.
type InstanceOptions struct {
	Daemon, Instance, Version string
	// Partitions is the partition count asked for explicitly (0: whatever
	// is fixed, or DefaultPartitions when this is the first start).
	Partitions int
	// Lease is the registration and lease TTL used when this instance
	// creates the buckets (0: DefaultLease); an existing bucket's TTL wins.
	Lease time.Duration
	// Quiesce, when set, runs after the instance stopped acting on work it
	// gives up and before it releases the leases (quiesce).
	Quiesce func(ctx context.Context)
}

// instanceName is a valid instance name: one KV key token.
var instanceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)

// ErrInstanceTaken: another live instance of the daemon has the name.
var ErrInstanceTaken = errors.New("instance name in use")

// Instance is this process's membership of a daemon's instances: its
// registration and the leases it holds, renewed by Run. A lease counts as
// held only until one lease period after its last renewal, so an instance
// cut off from NATS stops acting before another one may take its work.
type Instance struct {
	bus         *Bus
	opts        InstanceOptions
	reg, leases jetstream.KeyValue
	partitions  int
	lease       time.Duration
	started     time.Time
	mu          sync.Mutex
	regRev      uint64
	// slot: whose durable consumers it reads (SlotConsumer), and the
	// revision of its lease.
	slot       int
	slotRev    uint64
	owned      map[string]uint64 // work item -> lease revision
	validUntil time.Time
	// pending: items taken this round while other instances live, acted on
	// from the next (one round of grace for their last owner).
	pending map[string]bool
	view    atomic.Pointer[ownership]
	peers   atomic.Pointer[[]string] // Live's answer
	// nudge asks Run for a round now (Nudge).
	nudge chan struct{}
	// failingSince: per step of a round ("renewing leases", "taking up
	// free work"), the first of the rounds in which it failed in a row
	// (absent: the last one succeeded).
	failingSince map[string]time.Time
	// unsure: items a failing round stopped counting as held once its
	// lease had run out, not known to be anyone else's; the next round
	// that renews and takes up work reports those it did not take back
	// as lost.
	unsure map[string]bool
}

// Join registers an instance of a daemon, refusing a name a live instance
// holds, and reads (or, first, fixes) the partition count.
func (b *Bus) Join(ctx context.Context, o InstanceOptions) (*Instance, error) {
	if !instanceName.MatchString(o.Instance) {
		return nil, fmt.Errorf("--instance %q: want letters, digits, '-' and '_', up to 63, starting with a letter or digit", o.Instance)
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	reg, err := b.bucket(ctx, InstancesBucket, o.Lease)
	if err != nil {
		return nil, err
	}
	leases, err := b.bucket(ctx, LeasesBucket, o.Lease)
	if err != nil {
		return nil, err
	}
	n, err := b.fixPartitions(ctx, o.Partitions)
	if err != nil {
		return nil, err
	}
	st, err := reg.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", InstancesBucket, err)
	}
	in := &Instance{bus: b, opts: o, reg: reg, leases: leases, partitions: n, lease: st.TTL(), started: time.Now().UTC(), owned: map[string]uint64{}, pending: map[string]bool{}, nudge: make(chan struct{}, 1), failingSince: map[string]time.Time{}, unsure: map[string]bool{}}
	rev, err := in.register(ctx)
	if err != nil {
		return nil, err
	}
	in.regRev = rev
	// A slot a dead instance held is free within a lease.
	err = in.untilExpired(ctx, in.claimSlot)
	if err != nil {
		_ = reg.Delete(ctx, in.regKey(), jetstream.LastRevision(rev))
		return nil, err
	}
	return in, nil
}

// claimSlot takes the lowest free slot; ErrKeyExists when none is.
func (in *Instance) claimSlot(ctx context.Context) error {
	for slot := range MaxInstances {
		rev, err := in.leases.Create(ctx, in.slotKey(slot), []byte(in.opts.Instance))
		if err == nil {
			in.slot, in.slotRev = slot, rev
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("instance slot of %s: %w", in.opts.Daemon, err)
		}
	}
	return fmt.Errorf("%d instances of %s are running already, the most one system runs: %w", MaxInstances, in.opts.Daemon, jetstream.ErrKeyExists)
}

// Slot is the instance's slot: its durable consumers are the slot's.
func (in *Instance) Slot() int { return in.slot }

func (in *Instance) slotKey(slot int) string {
	return in.opts.Daemon + "." + slotWork + strconv.Itoa(slot)
}

// slotWork prefixes the lease keys of slots, which are no work item.
const slotWork = "slot."

// register makes the instance's registration. A name registered already
// is waited on for one lease: a dead instance's registration expires
// (a process restarted under its old name right after a crash joins),
// a live one's is renewed meanwhile, and the name is refused as soon as
// that is seen.
func (in *Instance) register(ctx context.Context) (uint64, error) {
	var seen uint64
	var rev uint64
	err := in.untilExpired(ctx, func(ctx context.Context) error {
		var err error
		rev, err = in.reg.Create(ctx, in.regKey(), in.record())
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
		if e, gerr := in.reg.Get(ctx, in.regKey()); gerr == nil {
			if seen != 0 && e.Revision() != seen {
				return errLive
			}
			seen = e.Revision()
		}
		return err
	})
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, errLive) {
		return 0, in.taken(ctx)
	}
	if err != nil {
		return 0, fmt.Errorf("register instance %s of %s: %w", in.opts.Instance, in.opts.Daemon, err)
	}
	return rev, nil
}

// errLive: a registration was renewed while waited on.
var errLive = errors.New("renewed")

// untilExpired calls try until it returns anything but ErrKeyExists or
// about one lease has passed (what a dead holder's key takes to expire).
func (in *Instance) untilExpired(ctx context.Context, try func(context.Context) error) error {
	deadline := time.Now().Add(in.lease + in.lease/2)
	for {
		err := try(ctx)
		if !errors.Is(err, jetstream.ErrKeyExists) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(max(in.lease/10, 50*time.Millisecond)):
		}
	}
}

// taken is the error of a name already registered.
func (in *Instance) taken(ctx context.Context) error {
	why := ""
	if e, err := in.reg.Get(ctx, in.regKey()); err == nil {
		var r events.InstanceRecord
		if json.Unmarshal(e.Value(), &r) == nil {
			why = fmt.Sprintf(" (heartbeat %s ago, on NATS node %s)", time.Since(r.Heartbeat).Round(time.Second), r.Node)
		}
	}
	return fmt.Errorf("%w: instance %q of %s is already running%s; give this one another --instance, or wait %s for a dead one's registration to expire",
		ErrInstanceTaken, in.opts.Instance, in.opts.Daemon, why, in.lease)
}

// Partitions is the system's partition count.
func (in *Instance) Partitions() int { return in.partitions }

// Lease is how long a registration or lease lives without renewal.
func (in *Instance) Lease() time.Duration { return in.lease }

// Name is the instance's name.
func (in *Instance) Name() string { return in.opts.Instance }

// PartitionItems are the work items of n partitions: p0 … p<n-1>.
func PartitionItems(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = events.PartitionItem(i)
	}
	return out
}

// Owns reports whether this instance holds work's lease now.
func (in *Instance) Owns(work string) bool {
	v := in.view.Load()
	return v != nil && v.items[work] && time.Now().Before(v.until)
}

// Holds is how many work items this instance holds now (what Owned
// lists, without listing them).
func (in *Instance) Holds() int {
	v := in.view.Load()
	if v == nil || !time.Now().Before(v.until) {
		return 0
	}
	return len(v.items)
}

// Owned lists the work items whose leases this instance holds now.
func (in *Instance) Owned() []string {
	v := in.view.Load()
	if v == nil || !time.Now().Before(v.until) {
		return nil
	}
	out := make([]string, 0, len(v.items))
	for w := range v.items {
		out = append(out, w)
	}
	slices.SortFunc(out, events.CompareWork)
	return out
}

// ownership is what Owns reads: the items held and until when, replaced
// whole after each change, so that a round waiting on NATS never holds
// up a handler asking what it owns.
type ownership struct {
	items map[string]bool
	until time.Time
}

// publish makes the held items what Owns answers from (under mu).
func (in *Instance) publish() {
	in.view.Store(&ownership{items: in.active(), until: in.validUntil})
}

// active are the items held and acted on: held, and not pending (under mu).
func (in *Instance) active() map[string]bool {
	items := make(map[string]bool, len(in.owned))
	for w := range in.owned {
		if !in.pending[w] {
			items[w] = true
		}
	}
	return items
}

func (in *Instance) regKey() string { return in.opts.Daemon + "." + in.opts.Instance }

func (in *Instance) leaseKey(work string) string { return in.opts.Daemon + "." + work }

func (in *Instance) record() []byte {
	r := events.InstanceRecord{Daemon: in.opts.Daemon, Instance: in.opts.Instance, Version: in.opts.Version,
		Node: in.bus.nc.ConnectedServerName(), Started: in.started, Heartbeat: time.Now().UTC(), Owns: in.ownedLocked()}
	data, _ := json.Marshal(r)
	return data
}

func (in *Instance) ownedLocked() []string {
	out := make([]string, 0, len(in.owned))
	for w := range in.owned {
		out = append(out, w)
	}
	slices.SortFunc(out, events.CompareWork)
	return out
}

// Balance runs one round: it renews the registration and the leases held,
// then takes free work items up to this instance's fair share of work
// (live instances of the daemon share it evenly, in name order) and
// releases what it holds beyond it, so that a joining instance gets its
// share. It returns the items gained and lost. An error that means the
// name is someone else's now (ErrInstanceTaken) is fatal; others leave the
// leases to expire on time.
func (in *Instance) Balance(ctx context.Context, work []string) (gained, lost []string, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	round := time.Now()
	before, held := in.active(), maps.Clone(in.owned)
	// Every lease is renewed at once, with the slot and the registration,
	// under one deadline of a third of a lease (one round's period): while
	// the buckets' stream has no leader (its node frozen, a new one not
	// yet elected) each write waits the client's 5 s, and a round renewing
	// 16 leases one after another took 80 s, so an instance that could
	// write again was held off its partitions for a minute more.
	renew, cancel := context.WithTimeout(ctx, in.lease/3)
	defer cancel()
	renewals, registered := in.renewAll(renew)
	var failed error
	for _, w := range sortedKeys(renewals) {
		switch r := renewals[w]; {
		case r.err == nil:
			in.owned[w] = r.rev
		case conflict(r.err):
			delete(in.owned, w) // expired and taken by another
		default:
			failed = cmp.Or(failed, fmt.Errorf("lease %s: %w", w, r.err))
		}
	}
	if registered != nil {
		if errors.Is(registered, ErrInstanceTaken) {
			in.owned = map[string]uint64{}
			in.publish()
			maps.Copy(in.unsure, before)
			lost = sortedKeys(in.unsure)
			clear(in.unsure)
			return nil, lost, registered
		}
		failed = cmp.Or(failed, fmt.Errorf("registration: %w", registered))
	}
	in.report(ctx, "renewing leases", round, failed)
	// lapsed: the view ran out before a renewed one replaced it (before
	// the round or during it): Owns said no meanwhile, and what arrived
	// then was left to the owner.
	var lapsed bool
	var shared error
	if failed == nil {
		ran := in.validUntil
		in.validUntil = round.Add(in.lease)
		clear(in.pending) // held a whole round: whoever had them is done
		in.publish()
		lapsed = !time.Now().Before(ran)
		// Over by two thirds of a lease after the round began, with room
		// for a release's quiesce, so that the next round's renewals land
		// before this view runs out.
		sctx, cancel := context.WithDeadline(ctx, round.Add(2*in.lease/3))
		shared = in.share(sctx, work)
		in.report(ctx, "taking up free work", round, shared)
		cancel()
	} else {
		lapsed = !time.Now().Before(in.validUntil)
	}
	// dropped: taken by another (a conflict) or released by share.
	dropped := map[string]bool{}
	for w := range held {
		if _, ok := in.owned[w]; !ok {
			dropped[w] = true
		}
	}
	if failed != nil && lapsed {
		for w := range in.owned {
			in.unsure[w] = true
		}
		in.owned = map[string]uint64{} // cut off longer than a lease: another may own them now
	}
	after := in.active()
	for w := range after {
		if lapsed || !before[w] {
			// After a lapse every held item counts as gained again, so
			// that the daemon catches up on what it left meanwhile.
			gained = append(gained, w)
		}
	}
	for w := range before {
		// After a lapse only what another instance took, or this one
		// released, is lost: a daemon keeps the state of work it holds
		// again (policyd republishes what it took in meanwhile).
		if !after[w] && (!lapsed || dropped[w]) {
			lost = append(lost, w)
		}
	}
	if failed == nil && shared == nil {
		// Free work was taken up: what was unsure and not taken back is
		// another's now.
		for w := range in.unsure {
			if !after[w] && !before[w] {
				lost = append(lost, w)
			}
		}
		clear(in.unsure)
	}
	slices.SortFunc(gained, events.CompareWork)
	slices.SortFunc(lost, events.CompareWork)
	in.publish()
	return gained, lost, nil
}

// share takes free items up to the fair share and releases the surplus.
func (in *Instance) share(ctx context.Context, work []string) error {
	live, err := in.live(ctx)
	if err != nil {
		return fmt.Errorf("listing the live instances: %w", err)
	}
	in.peers.Store(&live)
	quota := fairShare(len(work), live, in.opts.Instance)
	gone := map[string]uint64{}
	for w, rev := range in.owned {
		if !slices.Contains(work, w) {
			gone[w] = rev
			delete(in.owned, w)
		}
	}
	in.release(ctx, gone)
	free := slices.DeleteFunc(slices.Clone(work), func(w string) bool { _, has := in.owned[w]; return has })
	claimed, failed := in.claim(ctx, free, quota-len(in.owned))
	for w, rev := range claimed {
		in.owned[w] = rev
		if len(live) > 1 {
			// Released a moment ago by another instance, maybe still
			// finishing a decision on it: acted on from the next round.
			in.pending[w] = true
		}
	}
	held := in.ownedLocked()
	released := map[string]uint64{}
	for i := len(held) - 1; i >= 0 && len(in.owned) > quota; i-- {
		released[held[i]] = in.owned[held[i]]
		delete(in.owned, held[i])
	}
	in.release(ctx, released)
	return failed
}

// release stops acting on items, then gives up their leases (what a
// failed delete leaves expires on its own, no longer renewed).
func (in *Instance) release(ctx context.Context, items map[string]uint64) {
	if len(items) == 0 {
		return
	}
	for w := range items {
		delete(in.pending, w)
	}
	in.publish()
	in.quiesce(ctx)
	for w, rev := range items {
		_ = in.leases.Delete(ctx, in.leaseKey(w), jetstream.LastRevision(rev))
	}
}

// fairShare is how many of n items instance me holds when live instances
// (sorted names) share them evenly, the first ones taking the remainder.
func fairShare(n int, live []string, me string) int {
	i := slices.Index(live, me)
	if i < 0 || len(live) == 0 {
		return n
	}
	q := n / len(live)
	if i < n%len(live) {
		q++
	}
	return q
}

// renewRegistration writes the heartbeat; a registration that expired is
// made again unless another instance has taken the name meanwhile.
func (in *Instance) renewRegistration(ctx context.Context) error {
	srev, err := in.write(ctx, in.leases, in.slotKey(in.slot), []byte(in.opts.Instance), in.slotRev, in.holdsName)
	if conflict(err) {
		return fmt.Errorf("%w: slot %d of %s, whose consumers instance %s reads, went to another instance while this one was cut off", ErrInstanceTaken, in.slot, in.opts.Daemon, in.opts.Instance)
	}
	if err != nil {
		return err
	}
	in.slotRev = srev
	rev, err := in.write(ctx, in.reg, in.regKey(), in.record(), in.regRev, in.isThisProcess)
	if conflict(err) {
		return in.taken(ctx)
	}
	if err != nil {
		return err
	}
	in.regRev = rev
	return nil
}

// Run balances every third of a lease until ctx is done, calling changed
// (never concurrently) with what each round gained and lost; work lists the
// daemon's work items at each round. It returns ErrInstanceTaken when
// another instance took the name; then it holds nothing.
func (in *Instance) Run(ctx context.Context, work func() []string, changed func(gained, lost []string)) error {
	t := time.NewTicker(max(in.lease/3, 100*time.Millisecond))
	defer t.Stop()
	defer in.leave()
	for {
		gained, lost, err := in.Balance(ctx, work())
		if len(gained) > 0 || len(lost) > 0 {
			in.bus.log.Info("work moved", zap.String("daemon", in.opts.Daemon), zap.String("instance", in.opts.Instance), zap.Strings("gained", gained), zap.Strings("lost", lost))
			changed(gained, lost)
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-in.nudge:
		}
	}
}

// Nudge asks Run for a round now rather than at the next tick: the work
// items changed (a member cluster registered), and an instance alone
// should serve a new one at once, not a third of a lease later.
func (in *Instance) Nudge() {
	select {
	case in.nudge <- struct{}{}:
	default:
	}
}

// leave releases the leases and the registration, so that others take the
// work at once rather than after a lease period.
func (in *Instance) leave() {
	in.mu.Lock()
	defer in.mu.Unlock()
	// Two seconds for the deletes beside what quiesce may take.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second+quiesceBudget(in.lease))
	defer cancel()
	held := in.owned
	in.owned = map[string]uint64{}
	in.release(ctx, held)
	_ = in.leases.Delete(ctx, in.slotKey(in.slot), jetstream.LastRevision(in.slotRev))
	_ = in.reg.Delete(ctx, in.regKey(), jetstream.LastRevision(in.regRev))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, events.CompareWork)
	return out
}
