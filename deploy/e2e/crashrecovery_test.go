package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// startUp runs `flotilla up` (embedded NATS on listen, JetStream and the
// credentials key in dataDir) as the process "up", logging to dir/up.log
// (appended across restarts), and waits until its four daemons have
// logged ready for the lifetime-th time.
func (s *system) startUp(dataDir, listen string, lifetime int) {
	s.t.Helper()
	s.startUpWith(lifetime, "--data-dir", dataDir, "--listen", listen)
}

// startUpWith runs `flotilla up` with args, as startUp does.
func (s *system) startUpWith(lifetime int, args ...string) {
	s.t.Helper()
	// up registers its admin credentials under the user's config
	// directory, where the CLI finds them: the test's own, not the user's.
	if config := filepath.Join(s.dir, "config"); os.Getenv("XDG_CONFIG_HOME") != config {
		s.t.Setenv("XDG_CONFIG_HOME", config)
	}
	s.process("up", append([]string{"up", "--metrics-addr", "127.0.0.1:0",
		"--log-format", "console", "--probe-interval", "1s", "--resync-interval", "2s"}, args...)...)
	for _, d := range []string{"policyd", "schedulerd", "healthd", "executord"} {
		eventually(s.t, 60*time.Second, fmt.Sprintf("%s ready (lifetime %d of flotilla up)", d, lifetime), func() error {
			b, _ := os.ReadFile(filepath.Join(s.dir, "up.log"))
			if n := strings.Count(string(b), d+" ready"); n < lifetime {
				return fmt.Errorf("logged ready %d times", n)
			}
			return nil
		})
	}
}

// freeAddr returns a 127.0.0.1 address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestKilledFlotillaUpPlacesEveryTemplateWithin30sOfItsRestart: `flotilla
// up` is SIGKILLed while one `flotilla apply` of 60 Deployments is being
// handled and restarted on the same data dir. Every template is placed on
// all three members within 30 s of the restart, every member runs every
// Deployment, and the apply, which waited through the crash, never reports
// a refusal. The kill comes at two moments: once policyd's first binding is
// on the bus (the apply has usually published everything by then), and
// while the apply is still publishing (its in-flight publish is lost with
// the server; it must publish it again, and the rest, once NATS is back).
func TestKilledFlotillaUpPlacesEveryTemplateWithin30sOfItsRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		// published is how many of the apply's objects are stored when the
		// kill comes; 0: once policyd's first binding is on the bus.
		published int
	}{
		{name: "killed once policyd's first binding is on the bus"},
		{name: "killed while the apply is still publishing", published: 20},
	} {
		t.Run(tc.name, func(t *testing.T) { killFlotillaUpMidApply(t, tc.published) })
	}
}

// killFlotillaUpMidApply runs one case of
// TestKilledFlotillaUpPlacesEveryTemplateWithin30sOfItsRestart.
func killFlotillaUpMidApply(t *testing.T, published int) {
	const n = 60
	const bound = 30 * time.Second
	s := newSystem(t)
	t.Cleanup(func() { // a rare failure is read in the whole log, not its tail
		if t.Failed() {
			keep := filepath.Join(os.TempDir(), "flotilla-e2e-"+strings.ReplaceAll(t.Name(), "/", "-")+"-up.log")
			b, _ := os.ReadFile(filepath.Join(s.dir, "up.log"))
			if os.WriteFile(keep, b, 0o644) == nil {
				t.Logf("flotilla up's log kept in %s", keep)
			}
		}
	})
	dataDir, listen := filepath.Join(s.dir, "up"), freeAddr(t)
	s.natsURL = "nats://" + listen // the CLI talks to up's NATS, not newSystem's
	s.startUp(dataDir, listen, 1)
	s.joinAll()
	ns := uniqueNS("crash")
	t.Cleanup(func() { s.halt(); s.deleteNamespace(ns) })

	file := s.write("crash.yaml", deployments(ns, 0, n))

	// placed counts the templates placed on all three members, and the
	// bindings policyd has published, as the bus holds them now.
	placed := func(bus *natsbus.Bus) (int, int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ps, err := bus.LatestPerSubject(ctx, events.StreamPlacement, "flotilla.placement."+ns+".>")
		if err != nil {
			return 0, 0, err
		}
		bs, err := bus.LatestPerSubject(ctx, events.StreamPolicy, "flotilla.binding."+ns+".>")
		if err != nil {
			return 0, 0, err
		}
		done := 0
		for _, m := range ps {
			var p events.PlacementDecision
			if m.Err == nil && events.Decode(m.Event, &p) == nil && p.Scheduled && len(p.Clusters) == len(members) {
				done++
			}
		}
		return done, len(bs), nil
	}
	// up runs with authentication on: the test reads the bus as its admin
	// (<data-dir>/creds/admin.creds, written on up's first start).
	admin := natsbus.Options{Name: t.Name(), Credentials: filepath.Join(dataDir, "creds", "admin.creds")}
	bus, err := natsbus.Connect(context.Background(), s.natsURL, admin)
	if err != nil {
		t.Fatal(err)
	}

	// The apply runs in the background, through the crash: its connection
	// reconnects to the restarted NATS.
	type result struct {
		stdout, stderr string
		code           int
	}
	applied := make(chan result, 1)
	// stored is closed once the input stream holds `published` of the
	// apply's objects (only the apply publishes input from here on).
	stored := make(chan struct{})
	if published > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		sub, err := bus.Subscribe(ctx, events.StreamInput, []string{"flotilla.input.>"}, true)
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		go func() {
			_ = sub.Run(func(natsbus.Message) {
				if count++; count == published {
					close(stored)
				}
			})
		}()
	}
	start := time.Now()
	go func() {
		out, errs, code, err := runFlotilla(s.bin, s.natsURL, "apply", "-f", file, "--timeout", "150s")
		if err != nil {
			code, errs = -1, errs+err.Error()
		}
		applied <- result{out, errs, code}
	}()

	var atKillPlaced, atKillBound int
	deadline := time.Now().Add(60 * time.Second)
	if published > 0 {
		select {
		case <-stored:
		case <-time.After(60 * time.Second):
			t.Fatalf("fewer than %d objects of the apply stored within 60 s", published)
		}
	}
	for published == 0 && atKillBound == 0 { // policyd is mid-stream: it holds the rest
		if time.Now().After(deadline) {
			t.Fatal("no binding within 60 s of the apply")
		}
		if atKillPlaced, atKillBound, err = placed(bus); err != nil {
			t.Logf("reading placements: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	killedAfter := time.Since(start)
	s.kill("up")
	bus.Close()

	restart := time.Now()
	s.startUp(dataDir, listen, 2)
	ready := time.Since(restart)
	bus, err = natsbus.Connect(context.Background(), s.natsURL, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	eventually(t, bound, fmt.Sprintf("all %d templates placed within %s of the restart", n, bound), func() error {
		if got, bindings, err := placed(bus); err != nil || got != n {
			return fmt.Errorf("%d of %d placed, %d bindings (%v)", got, n, bindings, err)
		}
		return nil
	})
	recovered := time.Since(restart)

	s.waitDeployments(ns, n, 120*time.Second)
	inMembers := time.Since(restart)

	var r result
	select {
	case r = <-applied:
	case <-time.After(160 * time.Second):
		t.Fatal("flotilla apply still running 160 s after the restart")
	}
	// Everything was stored before the kill: it is confirmed (0) or, if
	// its answers were lost with the connection, reported as stored (3).
	if r.code != 0 && r.code != 3 {
		t.Errorf("flotilla apply through the crash: exit %d, want 0 or 3\nstdout: %s\nstderr: %s", r.code, tail(r.stdout, 2000), tail(r.stderr, 2000))
	}
	if published > 0 {
		t.Logf("kill -9 of flotilla up %s after the apply began, with %d or more of its %d objects stored",
			killedAfter.Round(10*time.Millisecond), published, n+1)
	} else {
		t.Logf("kill -9 of flotilla up %s after the apply began, with %d of %d bindings and %d placements on the bus",
			killedAfter.Round(10*time.Millisecond), atKillBound, n, atKillPlaced)
	}
	t.Logf("after the restart: daemons ready in %s, all %d placed in %s (bound %s), all in the 3 members in %s; apply exited %d",
		ready.Round(10*time.Millisecond), n, recovered.Round(10*time.Millisecond), bound, inMembers.Round(10*time.Millisecond), r.code)

	// Clean up: the templates leave every member.
	s.mustCLI("delete", "-f", file)
	s.waitDeployments(ns, 0, 120*time.Second)
}
