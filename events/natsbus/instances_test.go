package natsbus_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

func join(t *testing.T, bus *natsbus.Bus, name string, partitions int) (*natsbus.Instance, error) {
	t.Helper()
	return bus.Join(context.Background(), natsbus.InstanceOptions{Daemon: "schedulerd", Instance: name, Version: "test", Partitions: partitions, Lease: time.Second})
}

func TestAnInstanceNameAndThePartitionCountAreCheckedOnJoin(t *testing.T) {
	tests := []struct {
		name       string
		second     string
		partitions int
		wantErr    string // "" : joins
	}{
		{"a second instance with another name joins", "b", 0, ""},
		{"a second instance with the same name is refused", "a", 0, `instance "a" of schedulerd is already running`},
		{"an instance asking for the fixed count joins", "b", 8, ""},
		{"an instance asking for another count is refused", "b", 4, "--partitions 4: this system was set up with 8 partitions"},
		{"an instance name that is no key token is refused", "a.b", 0, `--instance "a.b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, bus := eventstest.Server(t)
			first, err := join(t, bus, "a", 8)
			if err != nil {
				t.Fatal(err)
			}
			run(t, first, natsbus.PartitionItems(8)) // alive: heartbeating
			if first.Partitions() != 8 {
				t.Fatalf("partitions: want 8, got %d", first.Partitions())
			}
			second, err := join(t, bus, tt.second, tt.partitions)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("want a join, got %v", err)
				}
				if second.Partitions() != 8 {
					t.Fatalf("partitions: want the fixed 8, got %d", second.Partitions())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tt.wantErr, err)
			}
		})
	}
}

// run balances in until the test ends.
func run(t *testing.T, in *natsbus.Instance, items []string) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Run(ctx, func() []string { return items }, func(_, _ []string) {}) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return cancel
}

func TestASecondInstanceTakesHalfThePartitionsAndAllWhenTheFirstStops(t *testing.T) {
	url, bus := eventstest.Server(t)
	items := natsbus.PartitionItems(16)
	a, err := join(t, bus, "a", 16)
	if err != nil {
		t.Fatal(err)
	}
	stopA := run(t, a, items)
	waitFor(t, "a to own every partition", func() bool { return len(a.Owned()) == 16 })

	b, err := join(t, eventstest.Connect(t, url), "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	run(t, b, items)
	waitFor(t, "a and b to hold 8 each", func() bool { return len(a.Owned()) == 8 && len(b.Owned()) == 8 })
	waitFor(t, "each to list both as live", func() bool {
		return slices.Equal(a.Live(), []string{"a", "b"}) && slices.Equal(b.Live(), []string{"a", "b"})
	})
	for _, w := range a.Owned() {
		if b.Owns(w) {
			t.Fatalf("%s is owned by both", w)
		}
	}
	_, leases, n, err := bus.Instances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]int{}
	for _, l := range leases {
		held[l.Instance]++
	}
	if diff := cmp.Diff(map[string]int{"a": 8, "b": 8}, held); diff != "" || n != 16 {
		t.Fatalf("leases (-want +got):\n%s partitions %d", diff, n)
	}

	stopA()
	waitFor(t, "b to own every partition", func() bool { return len(b.Owned()) == 16 })
	waitFor(t, "b to list itself alone as live", func() bool { return slices.Equal(b.Live(), []string{"b"}) })
}

func TestAnInstanceKilledWithoutLeavingLosesItsPartitionsWithinALease(t *testing.T) {
	url, _ := eventstest.Server(t)
	items := natsbus.PartitionItems(4)
	killed := eventstest.Connect(t, url)
	a, err := join(t, killed, "a", 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Balance(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	killed.Close() // gone without releasing anything, as after SIGKILL
	b, err := join(t, eventstest.Connect(t, url), "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	run(t, b, items)
	waitFor(t, "b to own every partition", func() bool { return len(b.Owned()) == 4 })
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("takeover took %s, want within about one lease (1s)", took)
	}
	if a.Owns("p0") {
		t.Fatal("the cut-off instance still counts p0 as its own past its lease")
	}
}

func TestTheNameOfAKilledInstanceIsTakenAgainWithinALease(t *testing.T) {
	u, _ := eventstest.Server(t)
	killed := eventstest.Connect(t, u)
	if _, err := join(t, killed, "a", 0); err != nil {
		t.Fatal(err)
	}
	killed.Close() // no heartbeat any more, nothing released
	start := time.Now()
	if _, err := join(t, eventstest.Connect(t, u), "a", 0); err != nil {
		t.Fatalf("want the name taken again, got %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %s, want within about a lease (1s)", took)
	}
}

func TestEachInstanceHoldsItsOwnSlotAndANinthIsRefused(t *testing.T) {
	_, bus := eventstest.Server(t)
	var slots []int
	for i := range natsbus.MaxInstances {
		in, err := join(t, bus, fmt.Sprintf("i%d", i), 0)
		if err != nil {
			t.Fatal(err)
		}
		run(t, in, nil)
		slots = append(slots, in.Slot())
	}
	if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5, 6, 7}, slots); diff != "" {
		t.Errorf("slots (-want +got):\n%s", diff)
	}
	if _, err := join(t, bus, "ninth", 0); err == nil || !strings.Contains(err.Error(), "8 instances of schedulerd are running already") {
		t.Errorf("a ninth instance: want refused, got %v", err)
	}
	if got := natsbus.SlotConsumer("schedulerd-policy", 0); got != "schedulerd-policy" {
		t.Errorf("slot 0's consumer is %q, want a single instance's name schedulerd-policy", got)
	}
}

func TestAPartitionReleasedByAnotherInstanceIsActedOnFromTheNextRound(t *testing.T) {
	url, bus := eventstest.Server(t)
	ctx := context.Background()
	items := natsbus.PartitionItems(4)
	a, err := join(t, bus, "a", 4)
	if err != nil {
		t.Fatal(err)
	}
	if gained, _, err := a.Balance(ctx, items); err != nil || len(gained) != 4 {
		t.Fatalf("alone, a gains every partition at once: gained %v (%v)", gained, err)
	}
	b, err := join(t, eventstest.Connect(t, url), "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, lost, err := a.Balance(ctx, items); err != nil || !cmp.Equal([]string{"p2", "p3"}, lost) {
		t.Fatalf("a releases its surplus: lost %v (%v)", lost, err)
	}
	gained, _, err := b.Balance(ctx, items)
	if err != nil || len(gained) != 0 || b.Owns("p2") {
		t.Fatalf("b acts on what a just released at once: gained %v, owns p2 %v (%v)", gained, b.Owns("p2"), err)
	}
	gained, _, err = b.Balance(ctx, items)
	if err != nil || !cmp.Equal([]string{"p2", "p3"}, gained) || !b.Owns("p2") {
		t.Fatalf("a round later, b acts on p2 and p3: gained %v (%v)", gained, err)
	}
}

// TestAnInstanceWhoseWritesLandedButWhoseAcknowledgementsWereLostKeepsItsNameAndLeases:
// a node killed or a leader changing under a renewal stores it and loses
// the reply, so the revision the instance kept is one behind its own write.
// The next round must see its own value there and carry on, not take its
// name for someone else's (which stopped every daemon of an up for good);
// so must one whose keys expired while it was cut off and nobody took
// them; a value of another process is still a conflict.
func TestAnInstanceWhoseWritesLandedButWhoseAcknowledgementsWereLostKeepsItsNameAndLeases(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	items := natsbus.PartitionItems(4)
	a, err := join(t, bus, "a", 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Balance(ctx, items); err != nil {
		t.Fatal(err)
	}
	rewrite := func(bucket string) {
		kv, err := bus.JetStream().KeyValue(ctx, bucket)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := kv.Keys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			e, err := kv.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kv.Put(ctx, k, e.Value()); err != nil { // the same value, a revision later
				t.Fatal(err)
			}
		}
	}
	rewrite(natsbus.LeasesBucket)
	rewrite(natsbus.InstancesBucket)
	if _, lost, err := a.Balance(ctx, items); err != nil || len(lost) != 0 {
		t.Fatalf("after its own writes whose replies were lost: lost %v, err %v; want nothing lost, no error", lost, err)
	}
	if diff := cmp.Diff(items, a.Owned()); diff != "" {
		t.Fatalf("owned (-want +got):\n%s", diff)
	}

	// Cut off past its lease (1s): every key of its expires. The server
	// expires them on its own timer, which a loaded machine delays: wait
	// until they are gone rather than a fixed time.
	time.Sleep(1500 * time.Millisecond)
	leases, err := bus.JetStream().KeyValue(ctx, natsbus.LeasesBucket)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if keys, err := leases.Keys(ctx); errors.Is(err, jetstream.ErrNoKeysFound) || (err == nil && len(keys) == 0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("its lease keys did not expire within 15 s of its lease")
		}
	}
	gained, _, err := a.Balance(ctx, items)
	if err != nil {
		t.Fatalf("after its keys expired with nobody else about: %v, want them made again", err)
	}
	if diff := cmp.Diff(items, gained); diff != "" {
		t.Fatalf("gained once its view had expired (-want +got), so the daemon catches up on what it skipped:\n%s", diff)
	}
	if _, _, err := a.Balance(ctx, items); err != nil || len(a.Owned()) != len(items) {
		t.Fatalf("the round after: owned %v, err %v; want every partition again", a.Owned(), err)
	}

	kv, err := bus.JetStream().KeyValue(ctx, natsbus.InstancesBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "schedulerd.a", []byte(`{"daemon":"schedulerd","instance":"a","started":"2001-01-01T00:00:00Z"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Balance(ctx, items); !errors.Is(err, natsbus.ErrInstanceTaken) {
		t.Fatalf("another process's registration under the name: %v, want ErrInstanceTaken", err)
	}
}

// An instance giving work up (a rebalance) stops acting on it first, then
// lets its daemon finish what it did for it (Quiesce), and only then
// releases the leases: while Quiesce runs, the leases are still its own,
// so the instance taking the work cannot act on it yet.
func TestWorkGivenUpIsReleasedOnlyAfterTheDaemonQuiesced(t *testing.T) {
	url, bus := eventstest.Server(t)
	items := natsbus.PartitionItems(4)
	type seen struct{ acting, leased int }
	calls := make(chan seen, 8)
	var a *natsbus.Instance
	a, err := bus.Join(context.Background(), natsbus.InstanceOptions{Daemon: "schedulerd", Instance: "a", Version: "test", Partitions: 4, Lease: time.Second,
		Quiesce: func(ctx context.Context) {
			_, leases, _, err := bus.Instances(ctx)
			if err != nil {
				t.Error(err)
			}
			held := 0
			for _, l := range leases {
				if l.Instance == "a" {
					held++
				}
			}
			calls <- seen{acting: a.Holds(), leased: held}
		}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, items)
	waitFor(t, "a to own every partition", func() bool { return len(a.Owned()) == 4 })
	b, err := join(t, eventstest.Connect(t, url), "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	run(t, b, items)
	select {
	case got := <-calls:
		if got != (seen{acting: 2, leased: 4}) {
			t.Errorf("while quiescing: a acts on %d partitions and holds %d leases; want 2 and 4", got.acting, got.leased)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a gave partitions up without quiescing")
	}
	waitFor(t, "a and b to hold 2 each", func() bool { return len(a.Owned()) == 2 && len(b.Owned()) == 2 })
}
