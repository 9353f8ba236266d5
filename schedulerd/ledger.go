package schedulerd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// Overcommit across instances (DESIGN.md decision 28). Each instance keeps
// its own reservations (reservations.go); the ledger shares them: a
// cluster's entry holds every instance's share (its reserved total in
// milli-units, and an expiry), and is written only by compare-and-set on
// the entry's revision. This file is the one place the cross-instance rule
// lives:
//
//   - a decision reads the other instances' shares as they were at the
//     revision it last saw of each cluster (the watch keeps them current);
//   - before a placement whose replicas depend on free capacity is
//     published, this instance's new share of every cluster it adds
//     replicas to is written at that revision (claim). A conflict means
//     another instance wrote since: the entry is read again; if every
//     share still fits in the cluster's free capacity the share is written
//     at the new revision, and if not the decision is made again with the
//     new figures. A placement whose claim failed is never published;
//   - an instance that holds every partition claims nothing: no other
//     instance decides anything, so none can race it (a single instance
//     costs what it did). It shares its reservations by the flush, and
//     at once when it loses a partition, before the instance that takes
//     the partition decides (a taker acts from its next round);
//   - every other change of this instance's share (placements that do not
//     depend on capacity, releases, expired reservations) is written within
//     ledgerFlush (flush): late, it only makes the others more careful;
//   - a share expires ReservationTTL after it was written, so the share of
//     an instance that died stops counting when its reservations would have
//     expired; sooner when the instance is known to be gone: a share whose
//     instance is not registered any more (its registration lapsed or it
//     left) stops counting once it is older than a lease period, the
//     longest a live instance's registration can take to be seen (a share
//     younger than that may be a new instance's not seen yet).

// ledgerKeyTTL: a cluster's entry not written for this long is dropped
// (every share in it has expired by then; the cluster may have left).
const ledgerKeyTTL = 2 * ReservationTTL

// ledgerFlush: how often changes that need no claim are written.
const ledgerFlush = time.Second

// maxClaims: how many times a decision is made again after the ledger moved
// under it before the event is retried later.
const maxClaims = 8

// errLedgerMoved: another instance wrote a cluster's entry since the
// decision read it; decide again.
var errLedgerMoved = errors.New("the capacity ledger moved")

// LedgerStore is the shared ledger (natsbus.Ledger): Put is a
// compare-and-set on the entry's revision (0: only if absent), failing
// with natsbus.ErrLedgerConflict.
type LedgerStore interface {
	Fetch(ctx context.Context, cluster string) ([]byte, uint64, error)
	Put(ctx context.Context, cluster string, value []byte, rev uint64) (uint64, error)
}

// ledgerEntry is a cluster's entry: each instance's share, by instance.
type ledgerEntry struct {
	Shares map[string]ledgerShare `json:"shares,omitempty"`
}

// ledgerShare is what one instance holds reserved in a cluster: placed
// replicas' requests (pods included) in milli-units, counted until Until.
type ledgerShare struct {
	Reserved map[corev1.ResourceName]int64 `json:"reserved"`
	Until    time.Time                     `json:"until"`
}

// others sums the shares of every instance but self that count at now
// (peers.counts), and returns the earliest time one of them stops counting
// (zero: none).
func (e ledgerEntry) others(self string, now time.Time, peers LedgerPeers) (map[corev1.ResourceName]int64, time.Time) {
	var sum map[corev1.ResourceName]int64
	var next time.Time
	for name, s := range e.Shares {
		end := peers.counts(name, s, now)
		if name == self || end.IsZero() {
			continue
		}
		if sum == nil {
			sum = map[corev1.ResourceName]int64{}
		}
		for r, milli := range s.Reserved {
			sum[r] += milli
		}
		if next.IsZero() || end.Before(next) {
			next = end
		}
	}
	return sum, next
}

// with is e with self's share set to reserved (removed when nothing is
// reserved), expiring ReservationTTL after now, and the shares that no
// longer count dropped.
func (e ledgerEntry) with(self string, reserved map[corev1.ResourceName]int64, now time.Time, peers LedgerPeers) ledgerEntry {
	out := ledgerEntry{Shares: make(map[string]ledgerShare, len(e.Shares)+1)}
	for name, s := range e.Shares {
		if name != self && !peers.counts(name, s, now).IsZero() {
			out.Shares[name] = s
		}
	}
	if !isZero(reserved) {
		out.Shares[self] = ledgerShare{Reserved: maps.Clone(reserved), Until: now.Add(ReservationTTL)}
	}
	return out
}

// LedgerPeers is what the ledger knows of the other instances: Alone
// reports that this instance holds every partition (its placements need no
// claim), Live lists the registered instances as last read (nil: not read
// yet), and Lease is the lease period (nil and zero: never alone; every
// share counts until it expires).
type LedgerPeers struct {
	Alone func() bool
	Live  func() []string
	Lease time.Duration
}

// counts says until when another instance's share counts, as seen at now
// (zero: it does not count now): until it expires, and, when its instance
// is not registered, no longer than a lease period after it was written.
func (p LedgerPeers) counts(name string, s ledgerShare, now time.Time) time.Time {
	end := s.Until
	if p.Live != nil {
		if live := p.Live(); live != nil && !slices.Contains(live, name) {
			if gone := s.Until.Add(p.Lease - ReservationTTL); gone.Before(end) {
				end = gone
			}
		}
	}
	if !end.After(now) {
		return time.Time{}
	}
	return end
}

// isZero reports a total that reserves nothing.
func isZero(total map[corev1.ResourceName]int64) bool {
	for _, milli := range total {
		if milli != 0 {
			return false
		}
	}
	return true
}

// sameTotal compares two totals, a missing resource counting as zero.
func sameTotal(a, b map[corev1.ResourceName]int64) bool {
	for r, milli := range a {
		if b[r] != milli {
			return false
		}
	}
	for r, milli := range b {
		if a[r] != milli {
			return false
		}
	}
	return true
}

// plus is total with n replicas of per added.
func plus(total map[corev1.ResourceName]int64, per []milliResource, n int32) map[corev1.ResourceName]int64 {
	out := maps.Clone(total)
	if out == nil {
		out = make(map[corev1.ResourceName]int64, len(per))
	}
	for _, r := range per {
		out[r.name] += r.milli * int64(n)
	}
	return out
}

// ledger is this instance's view of the shared ledger and what it holds of
// this instance's. Its zero value (no store) shares nothing: one instance
// on its own, as before the ledger.
type ledger struct {
	store LedgerStore
	self  string
	peers LedgerPeers
	// entries and revs: each cluster's entry at the latest revision seen.
	entries map[string]ledgerEntry
	revs    map[string]uint64
	// nextExpiry: the earliest expiry of another instance's share seen;
	// the shared figures are derived again once it has passed, or once the
	// registered instances are no longer live (as last derived).
	nextExpiry, lastFlush time.Time
	live                  []string
}

// use makes the ledger share through store as instance self.
func (l *ledger) use(store LedgerStore, self string, peers LedgerPeers) {
	*l = ledger{store: store, self: self, peers: peers, entries: map[string]ledgerEntry{}, revs: map[string]uint64{}}
}

// seen takes in cluster's entry at rev (value nil: none) unless a newer
// revision is held; forced (read after a conflict, when an expired entry
// comes back at 0), it is taken anyway. A value that does not decode
// counts as an empty entry: it is replaced by the next write.
func (l *ledger) seen(rs *reservations, cluster string, value []byte, rev uint64, now time.Time, forced bool) {
	if l.store == nil || !forced && rev <= l.revs[cluster] {
		return
	}
	var e ledgerEntry
	if len(value) > 0 && events.UnmarshalJSON(value, &e) != nil {
		e = ledgerEntry{}
	}
	l.entries[cluster], l.revs[cluster] = e, rev
	l.share(rs, cluster, now)
}

// share gives the reservations cluster's shared figure: the other
// instances' unexpired shares.
func (l *ledger) share(rs *reservations, cluster string, now time.Time) {
	sum, next := l.entries[cluster].others(l.self, now, l.peers)
	rs.setShared(cluster, sum)
	if !next.IsZero() && (l.nextExpiry.IsZero() || next.Before(l.nextExpiry)) {
		l.nextExpiry = next
	}
}

// expire drops from the shared figures the other instances' shares that
// no longer count at now: expired, or their instance no longer registered
// (noticed here, before every decision, whenever the registered instances
// changed).
func (l *ledger) expire(rs *reservations, now time.Time) {
	if l.peers.Live != nil {
		if live := l.peers.Live(); !slices.Equal(live, l.live) {
			l.live, l.nextExpiry = live, now // an instance came or went
		}
	}
	if l.nextExpiry.IsZero() || now.Before(l.nextExpiry) {
		return
	}
	l.nextExpiry = time.Time{}
	for _, cluster := range slices.Sorted(maps.Keys(l.entries)) {
		l.share(rs, cluster, now)
	}
}

// claim writes, before a placement is published, this instance's share of
// every cluster the placement adds replicas to, where free capacity
// limits them: bindings with requests under a strategy that reads free
// capacity, on clusters that report it (limited), by an instance not
// alone. Any other placement costs no round-trip. fits reports whether the
// others' shares and this instance's fit in a cluster's free capacity.
// errLedgerMoved: it no longer fits; decide again.
func (l *ledger) claim(ctx context.Context, rs *reservations, b events.Binding, before, after []events.TargetCluster, limited func(string) bool,
	fits func(cluster string, others, own map[corev1.ResourceName]int64) bool, now time.Time) error {
	if l.store == nil || len(b.ReplicaRequirements) == 0 || !needsCapacity(b) || l.peers.Alone != nil && l.peers.Alone() {
		return nil
	}
	had := make(map[string]int32, len(before))
	for _, c := range before {
		had[c.Name] = c.Replicas
	}
	var per []milliResource
	for _, c := range after {
		delta := c.Replicas - had[c.Name]
		if delta <= 0 || !limited(c.Name) {
			continue
		}
		if per == nil {
			per = perReplicaMilli(b.ReplicaRequirements)
			if t := rs.byTemplate[b.Key]; t != nil {
				per = t.perReplica // what reserve adds for this template
			}
		}
		share := plus(rs.totals[c.Name], per, delta)
		if l.covers(c.Name, share, now) {
			continue // within what an earlier claim took ahead
		}
		// Claim ahead: room for claimAhead times the replicas added, where
		// that fits, so that the next placements on the cluster need no
		// round-trip until the flush gives back what was not used.
		ask := plus(rs.totals[c.Name], per, delta*claimAhead)
		if !fits(c.Name, rs.shared[c.Name], ask) {
			ask = share
		}
		err := l.write(ctx, rs, c.Name, ask, now)
		// Another instance wrote meanwhile: while what all hold still fits,
		// the decision stands and the share is written at the new revision.
		for try := 1; try < maxClaims && errors.Is(err, errLedgerMoved); try++ {
			if !fits(c.Name, rs.shared[c.Name], ask) {
				if ask = share; !fits(c.Name, rs.shared[c.Name], ask) {
					break
				}
			}
			err = l.write(ctx, rs, c.Name, ask, now)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// claimAhead: how many times the replicas a placement adds to a cluster a
// claim reserves there (where they fit), so that one write serves several
// placements (two instances on dynamic weights over 100 clusters spent
// 8.2 ms of CPU per placement claiming each one's replicas exactly).
const claimAhead = 16

// covers reports whether this instance's share of cluster, as last
// written, already holds total and is not half-way to expiring.
func (l *ledger) covers(cluster string, total map[corev1.ResourceName]int64, now time.Time) bool {
	held, ok := l.entries[cluster].Shares[l.self]
	if !ok || !now.Before(held.Until.Add(-ReservationTTL/2)) {
		return false
	}
	for r, milli := range total {
		if held.Reserved[r] < milli {
			return false
		}
	}
	return true
}

// write stores this instance's share of cluster at the revision seen; on
// a conflict it reads the entry again and returns errLedgerMoved.
func (l *ledger) write(ctx context.Context, rs *reservations, cluster string, reserved map[corev1.ResourceName]int64, now time.Time) error {
	e := l.entries[cluster].with(l.self, reserved, now, l.peers)
	data, err := events.MarshalJSON(e)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", cluster, err)
	}
	rev, err := l.store.Put(ctx, cluster, data, l.revs[cluster])
	if errors.Is(err, natsbus.ErrLedgerConflict) {
		value, rev, ferr := l.store.Fetch(ctx, cluster)
		if ferr != nil {
			return ferr
		}
		l.seen(rs, cluster, value, rev, now, true)
		return fmt.Errorf("%w: %s", errLedgerMoved, cluster)
	}
	if err != nil {
		return err
	}
	l.entries[cluster], l.revs[cluster] = e, rev
	l.share(rs, cluster, now) // expired shares were dropped
	return nil
}

// flush writes, at most once per ledgerFlush (unless now), this instance's share of
// every cluster where the ledger holds another figure than its
// reservations: releases, placements that claimed nothing, a claim whose
// placement was not published, a share left by this instance's previous
// run. A conflict reads the entry again and writes again.
func (l *ledger) flush(ctx context.Context, rs *reservations, now time.Time, atOnce bool) error {
	if l.store == nil || !atOnce && now.Sub(l.lastFlush) < ledgerFlush {
		return nil
	}
	l.lastFlush = now
	clusters := map[string]bool{}
	for c := range rs.totals {
		clusters[c] = true
	}
	for c, e := range l.entries {
		if _, ok := e.Shares[l.self]; ok {
			clusters[c] = true
		}
	}
	var errs []error
	for _, c := range slices.Sorted(maps.Keys(clusters)) {
		held := l.entries[c].Shares[l.self]
		if sameTotal(held.Reserved, rs.totals[c]) && (isZero(held.Reserved) || now.Before(held.Until.Add(-ReservationTTL/2))) {
			continue // up to date, and not half-way to expiring
		}
		err := l.write(ctx, rs, c, rs.totals[c], now)
		for try := 1; try < maxClaims && errors.Is(err, errLedgerMoved); try++ {
			err = l.write(ctx, rs, c, rs.totals[c], now) // the entry was read again
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// SetLedger makes the handler share its reservations with the other
// schedulerd instances through store, as instance self (nil: it shares
// nothing, as a single instance did before the ledger), knowing of the
// others what peers says.
func (h *Handler) SetLedger(store LedgerStore, self string, peers LedgerPeers) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if store == nil {
		h.ledger = ledger{}
		return
	}
	h.ledger.use(store, self, peers)
}

// LedgerSeen takes in a cluster's ledger entry at rev as the watch
// delivers it (value nil: deleted).
func (h *Handler) LedgerSeen(cluster string, value []byte, rev uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ledger.seen(&h.reserved, cluster, value, rev, h.now(), false)
}

// FlushLedger writes what changed of this instance's reservations and
// needed no claim: at most once per ledgerFlush, or at once (an instance
// that was alone lost a partition).
func (h *Handler) FlushLedger(ctx context.Context, atOnce bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ledger.flush(ctx, &h.reserved, h.now(), atOnce)
}
