package natsbus_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/cputime"
)

// BenchmarkPlacementPathFloor is flotilla bench's message traffic with
// handlers that do nothing but publish: per template an applied event
// (0.9 KB) on its input subject; a "policyd" consumer publishing a binding
// (2.9 KB); a "schedulerd" consumer publishing a placement (8 KB); all on
// the production streams, file storage, with the production consumer
// machinery (deferred publishes, ack after storage). What it measures is
// the floor the bus and natsbus put under the whole path on this machine:
// no validation, matching, scheduling or JSON. templates/s is the figure
// to compare with flotilla bench's placements/s (docs/performance.md).
// stored=4 is the traffic before a claimed template's binding became its
// acceptance (DESIGN.md decision 15): policyd also published an accepted
// record (1.2 KB) per template.
//
// stored=3,codec is stored=3 with the JSON the event contract itself asks
// for: the "policyd" relay decodes the applied template as policyd does
// (into plain JSON values) and encodes a real binding around it; the
// "schedulerd" relay decodes that binding as schedulerd does
// (SpecCache.DecodeBinding) and encodes a real placement embedding it, of
// bench's shape (testdata/bench-*.json, taken from a flotilla bench run:
// 100 feasible clusters with their scores). Between stored=3 and it lies
// what JSON costs; between it and flotilla bench, what validation,
// matching, scheduling and bookkeeping cost (docs/performance.md).
func BenchmarkPlacementPathFloor(b *testing.B) {
	b.Run("stored=3", func(b *testing.B) { _, bus := eventstest.Server(b); placementPathFloor(b, bus, false, nil) })
	b.Run("stored=4", func(b *testing.B) { _, bus := eventstest.Server(b); placementPathFloor(b, bus, true, nil) })
	b.Run("stored=3,codec", func(b *testing.B) {
		_, bus := eventstest.Server(b)
		placementPathFloor(b, bus, false, benchCodec(b))
	})
}

// floorCodec makes the relays' outputs from their inputs (nil: fixed
// JSON strings).
type floorCodec struct {
	binding   func(applied events.Event, k events.ObjectKey) (any, error)
	placement func(binding events.Event) (any, error)
}

// benchCodec decodes and encodes the real payload types with the shapes of
// a flotilla bench run.
func benchCodec(b *testing.B) *floorCodec {
	var binding events.Binding
	var placement events.PlacementDecision
	for name, into := range map[string]any{"bench-binding.json": &binding, "bench-placement.json": &placement} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		if err := events.UnmarshalJSON(data, into); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	var specs events.SpecCache
	return &floorCodec{
		binding: func(applied events.Event, k events.ObjectKey) (any, error) {
			var template map[string]any
			if err := events.UnmarshalJSON(applied.Data(), &template); err != nil {
				return nil, err
			}
			out := binding
			out.Key, out.Template = k, applied.Data()
			return out, nil
		},
		placement: func(e events.Event) (any, error) {
			in, err := specs.DecodeBinding(e)
			if err != nil {
				return nil, err
			}
			out := placement
			out.Key, out.Binding = in.Key, &in
			return out, nil
		},
	}
}

// BenchmarkPlacementPathFloorOnThreeNodes is the floor on a three-node
// cluster in this process with three replicas of every stream, with
// JetStream's default fsync (every 2 minutes) and with sync_interval:
// always (what make nats-cluster runs; DESIGN.md §2 has the ratio).
func BenchmarkPlacementPathFloorOnThreeNodes(b *testing.B) {
	for _, always := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync_always=%t", always), func(b *testing.B) {
			bus, err := natsbus.Connect(context.Background(), cluster(b, always, nil, nil), natsbus.Options{Name: b.Name(), StreamReplicas: 3})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(bus.Close)
			if err := bus.EnsureStreams(context.Background()); err != nil {
				b.Fatal(err)
			}
			placementPathFloor(b, bus, false, nil)
		})
	}
}

func placementPathFloor(b *testing.B, bus *natsbus.Bus, withAccepted bool, codec *floorCodec) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A JSON string of n bytes: data that is not JSON is dead-lettered as
	// unreadable (bus.go, decode), and a floor of dead letters never places.
	body := func(n int) []byte { return []byte(`"` + strings.Repeat("x", n-2) + `"`) }
	applied, accepted, binding, placement := body(900), body(1200), body(2900), body(8000)
	keyOf := func(e events.Event) events.ObjectKey {
		return events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "bench", Name: e.Subject()}
	}
	relay := func(name, stream string, subjects []string, outs func(events.ObjectKey) []string, data [][]byte, makeOut func(events.Event, events.ObjectKey) (any, error), done func()) {
		c, err := bus.Bind(ctx, natsbus.ConsumerSpec{Name: name, Stream: stream, Subjects: subjects})
		if err != nil {
			b.Fatal(err)
		}
		go c.Run(ctx, func(ctx context.Context, e events.Event) error {
			k := keyOf(e)
			for i, subj := range outs(k) {
				var payload any = data[i]
				if makeOut != nil {
					var err error
					if payload, err = makeOut(e, k); err != nil {
						return events.Permanent(err)
					}
				}
				out, err := events.NewWithID(events.DeterministicID(name, e.ID(), fmt.Sprint(i)), events.TypeBindingChanged, "/floor", k.Name, payload)
				if err != nil {
					return events.Permanent(err)
				}
				events.CausedBy(&out, e)
				if err := bus.PublishDeferred(ctx, subj, out); err != nil {
					return err
				}
			}
			if done != nil {
				done()
			}
			return nil
		})
	}
	var placed atomic.Int64
	all := make(chan struct{})
	policydOuts, policydData := func(k events.ObjectKey) []string { return []string{events.BindingSubject(k)} }, [][]byte{binding}
	if withAccepted {
		policydOuts, policydData = func(k events.ObjectKey) []string { return []string{events.ObjectSubject(k), events.BindingSubject(k)} }, [][]byte{accepted, binding}
	}
	var makeBinding, makePlacement func(events.Event, events.ObjectKey) (any, error)
	if codec != nil {
		makeBinding = codec.binding
		makePlacement = func(e events.Event, _ events.ObjectKey) (any, error) { return codec.placement(e) }
		// The template as flotilla bench publishes it.
		applied = []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"app-00001"},"name":"app-00001","namespace":"bench"},"spec":{"replicas":12,"selector":{"matchLabels":{"app":"app-00001"}},"template":{"metadata":{"labels":{"app":"app-00001"}},"spec":{"containers":[{"image":"nginx:1.25.3","name":"app","resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]}}}}`)
	}
	relay("floor-policyd", events.StreamInput, []string{events.AllInput}, policydOuts, policydData, makeBinding, nil)
	relay("floor-schedulerd", events.StreamPolicy, []string{events.AllBindings},
		func(k events.ObjectKey) []string { return []string{events.PlacementSubject(k)} }, [][]byte{placement}, makePlacement, func() {
			if placed.Add(1) == int64(b.N) {
				close(all)
			}
		})
	msgs := make([]events.Event, b.N)
	subjects := make([]string, b.N)
	for i := range msgs {
		k := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "bench", Name: fmt.Sprintf("app-%06d", i)}
		msgs[i], _ = events.New(events.TypeObjectApplied, "/floor", k.Name, applied)
		subjects[i] = events.InputSubject(k)
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Process()
	for i, e := range msgs {
		if err := bus.PublishAsync(subjects[i], e); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatalf("only %d of %d placements in 5 minutes", placed.Load(), b.N)
	}
	// The last placement's publish is deferred: wait until it is stored.
	for {
		st, err := bus.JetStream().Stream(ctx, events.StreamPlacement)
		if err != nil {
			b.Fatal(err)
		}
		if info, err := st.Info(ctx); err == nil && info.State.Msgs >= uint64(b.N) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "templates/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
