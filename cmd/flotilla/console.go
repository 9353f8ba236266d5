package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/console"
	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// consoleStreams are the streams the web console reads and follows: what
// the read model is computed from, and the dead letters. The console role
// may read exactly these (roleGrant).
var consoleStreams = []string{events.StreamPolicy, events.StreamHealth, events.StreamPlacement, events.StreamWork, events.StreamDeadLetter}

// busSource is the console's Source on the bus.
type busSource struct{ bus *natsbus.Bus }

func (s busSource) Fleet(ctx context.Context) (readmodel.Fleet, error) { return readFleet(ctx, s.bus) }

func (s busSource) DeadLetters(ctx context.Context) ([]readmodel.DeadLetter, error) {
	ms, err := s.bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
	if errors.Is(err, natsbus.ErrStreamMissing) {
		return nil, nil
	}
	return readmodel.DeadLetters(stored(ms)), err
}

func (s busSource) History(ctx context.Context, key events.ObjectKey) ([]console.Event, error) {
	var all []natsbus.Message
	for _, f := range console.HistorySubjects(key) {
		ms, err := s.bus.Replay(ctx, f.Stream, natsbus.ReplayOptions{Subjects: []string{f.Filter}})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Stream, err)
		}
		all = append(all, ms...)
	}
	return consoleEvents(all), nil
}

func (s busSource) Recent(ctx context.Context, limit int) ([]console.Event, error) {
	var all []natsbus.Message
	for _, stream := range consoleStreams {
		st, err := s.bus.StreamState(ctx, stream)
		if err != nil || st.Messages == 0 {
			continue
		}
		from := max(st.FirstSeq, st.LastSeq-min(st.LastSeq, uint64(limit))+1)
		ms, err := s.bus.Replay(ctx, stream, natsbus.ReplayOptions{FromSeq: from})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", stream, err)
		}
		all = append(all, ms...)
	}
	return consoleEvents(all), nil
}

// Follow follows every console stream with one ordered consumer each,
// from now on: the console calls it once, whatever the number of tabs.
func (s busSource) Follow(ctx context.Context, fn func(console.Event)) error {
	for _, stream := range consoleStreams {
		sub, err := s.bus.Subscribe(ctx, stream, nil, true)
		if err != nil {
			return fmt.Errorf("follow %s: %w", stream, err)
		}
		go func() { _ = sub.Run(func(m natsbus.Message) { fn(consoleEvent(m)) }) }()
	}
	return nil
}

// consoleEvents are ms in storage order across streams.
func consoleEvents(ms []natsbus.Message) []console.Event {
	natsbus.SortByTime(ms)
	out := make([]console.Event, 0, len(ms))
	for _, m := range ms {
		out = append(out, consoleEvent(m))
	}
	return out
}

func consoleEvent(m natsbus.Message) console.Event {
	return console.Event{Stream: m.Stream, Subject: m.Subject, Stored: storedMessage(m)}
}

// consoleOff is the --console-listen value that turns up's console off.
const consoleOff = "off"

// listenConsole opens the console's address.
func listenConsole(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("console: listen on %s: %w", addr, err)
	}
	return l, nil
}

// serveConsole serves the console on l, reading bus, until ctx is done.
func serveConsole(ctx context.Context, bus *natsbus.Bus, l net.Listener, log *zap.Logger, errw io.Writer) error {
	s, err := console.New(busSource{bus}, log)
	if err != nil {
		l.Close()
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() {
		// Without the live channel the pages still stand, complete.
		if err := s.Run(ctx); err != nil {
			log.Warn("console: not live", zap.Error(err))
			fmt.Fprintf(errw, "flotilla console: WARNING: pages will not update by themselves: %v\n", err)
		}
	}()
	go func() { done <- srv.Serve(l) }()
	fmt.Fprintf(errw, "flotilla console: http://%s\n", l.Addr())
	log.Info("console", zap.String("url", "http://"+l.Addr().String()))
	select {
	case <-ctx.Done():
	case err = <-done:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func newConsole(g *globals) *cobra.Command {
	var listen string
	c := &cobra.Command{
		Use:   "console",
		Short: "Serve the read-only web console: clusters, workloads, decisions and failovers, live",
		Long: `Serve a read-only web console on --listen, read from the bus through the same
read model as get, describe, explain and replay: an overview of every member
cluster, the workloads as a templates × clusters matrix, each workload's
decision, manifests and timeline, each cluster, and the live tail of the bus.
With authentication on, give it the credentials of the console role
(flotilla creds issue console NAME -o FILE), which read and publish nothing.
flotilla up serves it too (--console-listen). docs/console.md has the pages.`,
		Example: "  flotilla console --listen 127.0.0.1:8080\n  flotilla console --creds console.creds --listen :8080",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			defer log.Sync()
			l, err := listenConsole(listen)
			if err != nil {
				return err
			}
			return g.withBus(cmd.Context(), func(bus *natsbus.Bus) error {
				return serveConsole(cmd.Context(), bus, l, log, cmd.ErrOrStderr())
			})
		},
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address the console serves on")
	return c
}

// upConsole prepares the console `flotilla up` serves on addr, connected
// with the console role's credentials when auth is on. A busy address is a
// warning and no console (nil run): several up can run side by side.
func upConsole(ctx context.Context, auth *upAuth, natsURL string, rt *runtime, addr string, errw io.Writer) (func(context.Context) error, error) {
	l, err := listenConsole(addr)
	if err != nil {
		rt.log.Warn("no console", zap.Error(err))
		fmt.Fprintf(errw, "flotilla up: WARNING: %v; running without the console (--console-listen ADDR, or off)\n", err)
		return nil, nil
	}
	bus := rt.bus
	if auth != nil {
		if bus, err = auth.connectAs(ctx, roleConsole, natsURL, rt); err != nil {
			l.Close()
			return nil, fmt.Errorf("console: %w", err)
		}
	}
	return func(ctx context.Context) error {
		if bus != rt.bus {
			defer bus.Close()
		}
		return serveConsole(ctx, bus, l, rt.log, errw)
	}, nil
}
