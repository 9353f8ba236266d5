package eventstest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TakenByAKilledProcess binds spec's durable consumer (creating it if
// missing), takes the next n messages as a process would that dies
// before it acknowledges them, and has JetStream deliver them again after
// redeliverAfter: as after a crash, they come back after a delay while
// messages published meanwhile are delivered at once. (A crash leaves them
// for the consumer's AckWait; a Nak with a delay stands for it, so the test
// need not wait an AckWait.) It fails t unless n messages were taken.
func TakenByAKilledProcess(t testing.TB, bus *natsbus.Bus, spec natsbus.ConsumerSpec, n int, redeliverAfter time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := bus.Bind(ctx, spec); err != nil {
		t.Fatal(err)
	}
	c, err := bus.JetStream().Consumer(ctx, spec.Stream, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.Fetch(n)
	if err != nil {
		t.Fatal(err)
	}
	taken := 0
	for m := range batch.Messages() {
		if err := m.NakWithDelay(redeliverAfter); err != nil {
			t.Fatal(err)
		}
		taken++
	}
	if taken != n {
		t.Fatalf("took %d messages from %s, want %d", taken, spec.Name, n)
	}
}

// ConsumerSettled waits (up to settleWithin) until spec's consumer has been
// delivered every message of its stream up to sequence last and leaves
// exactly unacked of them unacknowledged (those a killed process took,
// say), and fails t otherwise.
func ConsumerSettled(t testing.TB, bus *natsbus.Bus, spec natsbus.ConsumerSpec, last uint64, unacked int) {
	t.Helper()
	if _, err := bus.Bind(context.Background(), spec); err != nil { // before the daemon binds it, say
		t.Fatal(err)
	}
	var delivered uint64
	var pending int
	for deadline := time.Now().Add(settleWithin); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c, err := bus.JetStream().Consumer(context.Background(), spec.Stream, spec.Name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		delivered, pending = info.Delivered.Stream, info.NumAckPending
		if delivered >= last && info.NumPending == 0 && pending == unacked && (unacked > 0 || info.AckFloor.Stream >= last) {
			return
		}
	}
	t.Fatalf("consumer %s: delivered up to sequence %d with %d unacknowledged within %s, want %d with %d", spec.Name, delivered, pending, settleWithin, last, unacked)
}

// settleWithin bounds ConsumerSettled's wait. A daemon restarted under the
// same instance name may wait out its predecessor's lease (10 s) before it
// consumes, and on a loaded machine the server expires lease keys late:
// 20 s was exceeded twice in one CI run of the whole suite.
const settleWithin = 60 * time.Second

// Running runs run (a daemon's Run) in the background until the returned
// stop is called, or the test ends; stop cancels its context, waits for it
// to return and fails t if it returned an error. Calling stop again does
// nothing.
func Running(t testing.TB, run func(context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(stop)
	return stop
}

// Instance runs one daemon instance, which build makes on a connection of
// its own to url, until the test ends; kill closes that connection, as
// SIGKILL would, leaving the instance's leases to expire. Run's error is
// not checked (a killed instance's is expected); an instance still running
// 10 s after the test ends fails it.
func Instance(t testing.TB, url string, build func(*natsbus.Bus) func(context.Context) error) (kill func()) {
	t.Helper()
	bus := Connect(t, url)
	run := build(bus)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("an instance did not stop within 10s")
		}
	})
	return bus.Close
}

// Leases are daemon's held leases: work item -> instance.
func Leases(t testing.TB, bus *natsbus.Bus, daemon string) map[string]string {
	t.Helper()
	_, leases, _, err := bus.Instances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range leases {
		if l.Daemon == daemon {
			out[l.Work] = l.Instance
		}
	}
	return out
}

// PartitionsHeld counts daemon's partition leases per instance.
func PartitionsHeld(t testing.TB, bus *natsbus.Bus, daemon string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for work, instance := range Leases(t, bus, daemon) {
		if strings.HasPrefix(work, "p") {
			out[instance]++
		}
	}
	return out
}

// Eventually polls cond every 50ms until it holds, failing the test after
// 20s.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
