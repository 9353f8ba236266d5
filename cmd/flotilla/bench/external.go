package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// The bench's NATS: an embedded server, or an external one (--nats-url).

// benchBus connects the bench to its NATS, embedded or external, with the
// streams made; url is where the daemons connect, cleanup ends it all.
func benchBus(ctx context.Context, o *benchOptions, res *benchResult) (bus *natsbus.Bus, url string, cleanup func(), err error) {
	var undo []func()
	cleanup = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	opts := natsbus.Options{Name: "flotilla-bench", StreamReplicas: o.streamReplicas}
	if o.nats.URL != "" {
		url, opts.Credentials, opts.TLSCA = o.nats.URL, o.nats.Credentials, o.nats.TLSCA
		res.NATS = url
	} else {
		dir := o.dataDir
		if dir == "" {
			tmp, err := os.MkdirTemp("", "flotilla-bench-")
			if err != nil {
				return nil, "", cleanup, err
			}
			undo = append(undo, func() { os.RemoveAll(tmp) })
			dir = tmp
		} else {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, "", cleanup, fmt.Errorf("--data-dir: %w", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				return nil, "", cleanup, fmt.Errorf("--data-dir %s is not empty: the bench needs fresh streams", dir)
			}
			res.Machine.DataDirKept = true
		}
		res.Machine.DataDir = dir
		srv, err := natsbus.StartEmbedded("127.0.0.1:0", filepath.Join(dir, "jetstream"), nil)
		if err != nil {
			return nil, "", cleanup, err
		}
		undo = append(undo, srv.Shutdown)
		url = srv.URL()
	}
	bus, err = natsbus.Connect(ctx, url, opts)
	if err != nil {
		return nil, "", cleanup, err
	}
	undo = append(undo, bus.Close)
	if o.nats.URL != "" {
		if err := streamsEmpty(ctx, bus); err != nil {
			return nil, "", cleanup, fmt.Errorf("--nats-url %s: %w", url, err)
		}
	}
	if err := bus.EnsureStreams(ctx); err != nil {
		return nil, "", cleanup, err
	}
	return bus, url, cleanup, nil
}

// streamsEmpty fails unless every stream of the catalogue is absent or
// empty: the bench's templates and placements must be the only ones, and
// daemons that had read earlier events would decide other work.
func streamsEmpty(ctx context.Context, bus *natsbus.Bus) error {
	var held []string
	for _, s := range events.Streams {
		st, err := bus.StreamState(ctx, s.Name)
		if err == nil && st.Messages > 0 {
			held = append(held, fmt.Sprintf("%s (%d messages)", s.Name, st.Messages))
		}
	}
	if len(held) > 0 {
		return fmt.Errorf("streams %s are not empty: the bench needs a fresh server or cluster", strings.Join(held, ", "))
	}
	return nil
}

// waitPartitionsShared waits until schedulerd's partitions are all held and
// each of its instances holds its fair share (at least partitions ÷
// instances), and then, with several instances, one more round: a partition
// taken while others live is acted on only from its taker's next round
// (DESIGN.md §7). The measured run starts with the work split and acted on.
func waitPartitionsShared(ctx context.Context, bus *natsbus.Bus, ds *benchDaemons, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		_, leases, n, err := bus.Instances(ctx)
		why := ""
		switch {
		case err != nil:
			why = err.Error()
		case n == 0:
			why = "no partition count fixed yet"
		default:
			held := map[string]int{}
			total := 0
			for _, l := range leases {
				if l.Daemon == "schedulerd" {
					if _, ok := events.PartitionNumber(l.Work); ok {
						held[l.Instance]++
						total++
					}
				}
			}
			if total == n && len(held) == ds.instances {
				ok := true
				for _, c := range held {
					ok = ok && c >= n/ds.instances
				}
				if ok && ds.instances > 1 {
					return sleep(ctx, natsbus.DefaultLease/3+500*time.Millisecond)
				}
				if ok {
					return nil
				}
			}
			why = fmt.Sprintf("%d of %d partitions held, by %v", total, n, held)
		}
		if time.Now().After(deadline) {
			return errors.New("schedulerd's partitions are not shared out: " + why)
		}
		select {
		case err := <-ds.exited:
			return err
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stuck says where a run that placed too few stopped: how many subjects
// the policy stream holds (bindings, among others), what each consumer
// of the path still has pending, and the templates placed per partition.
func (ds *benchDaemons) stuck(ctx context.Context, bus *natsbus.Bus, keys []events.ObjectKey) string {
	var sb strings.Builder
	if _, _, n, err := bus.Instances(ctx); err == nil && n > 0 {
		placed := map[string]bool{}
		if ps, err := bus.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements); err == nil {
			for _, m := range ps {
				placed[m.Subject] = true
			}
		}
		per, of := make([]int, n), make([]int, n)
		for _, k := range keys {
			p := events.Partition(k, n)
			of[p]++
			if placed[events.PlacementSubject(k)] {
				per[p]++
			}
		}
		sb.WriteString("\nplaced per partition:")
		for p := range per {
			fmt.Fprintf(&sb, " p%d %d/%d", p, per[p], of[p])
		}
	}
	if st, err := bus.StreamState(ctx, events.StreamPolicy); err == nil {
		fmt.Fprintf(&sb, "\n%s: %d subjects, %d messages", events.StreamPolicy, st.Subjects, st.Messages)
	}
	for _, c := range ds.consumers() {
		if err := bus.ConsumerIdle(ctx, c.stream, c.name); err != nil {
			fmt.Fprintf(&sb, "\n%s/%s: %v", c.stream, c.name, err)
		}
	}
	return sb.String()
}
