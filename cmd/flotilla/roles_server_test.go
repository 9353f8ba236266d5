package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/executord"
	"github.com/flotilla-io/flotilla/healthd"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/schedulerd"
)

// roleServer is an embedded server with authentication on, its streams,
// and credentials of any role signed with the grant roleGrant derives.
type roleServer struct {
	t     *testing.T
	url   string
	auth  *natsbus.Authority
	admin *natsbus.Bus
}

func newRoleServer(t *testing.T) *roleServer {
	t.Helper()
	url, auth := eventstest.SecuredServer(t)
	s := &roleServer{t: t, url: url, auth: auth}
	s.admin = s.connect(roleAdmin)
	if err := s.admin.EnsureStreams(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// creds writes a credentials file of role, as `creds issue role` would
// sign it.
func (s *roleServer) creds(role string) string {
	s.t.Helper()
	g, err := roleGrant(natsbus.IssueRequest{Role: role})
	if err != nil {
		s.t.Fatal(err)
	}
	raw, err := s.auth.UserCredentials(role+"-test", role, g)
	if err != nil {
		s.t.Fatal(err)
	}
	file := filepath.Join(s.t.TempDir(), role+".creds")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		s.t.Fatal(err)
	}
	return file
}

// connect opens a connection on a fresh credential of role.
func (s *roleServer) connect(role string) *natsbus.Bus {
	s.t.Helper()
	bus, err := natsbus.Connect(context.Background(), s.url, natsbus.Options{Name: s.t.Name(), Credentials: s.creds(role)})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(bus.Close)
	return bus
}

// publish stores an event of type typ on subject as the admin.
func (s *roleServer) publish(subject string, typ events.Type, key events.ObjectKey) {
	s.t.Helper()
	e, err := events.New(typ, "/test", key.String(), map[string]string{"kind": key.Kind})
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.admin.Publish(context.Background(), subject, e); err != nil {
		s.t.Fatal(err)
	}
}

// noRefusal fails the test if bus was refused anything.
func noRefusal(t *testing.T, bus *natsbus.Bus) {
	t.Helper()
	select {
	case err := <-bus.Refused():
		t.Errorf("refused: %v", err)
	default:
	}
}

var roleKey = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}

// TestAViewerReadsReplaysAndWatchesThroughItsOwnConsumers: what get,
// describe, explain, replay, watch and the console do, on a viewer's and
// the console's credentials, with the daemons' durable consumers bound.
func TestAViewerReadsReplaysAndWatchesThroughItsOwnConsumers(t *testing.T) {
	s := newRoleServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for d, consumers := range map[string][]natsbus.ConsumerSpec{"policyd": policyd.Consumers(policyd.DefaultConfig()), "schedulerd": schedulerd.Consumers(schedulerd.DefaultConfig())} {
		bus := s.connect(d)
		for _, c := range consumers {
			if _, err := bus.Bind(ctx, c); err != nil {
				t.Fatalf("%s binds %s: %v", d, c.Name, err)
			}
		}
	}
	s.publish(events.PlacementSubject(roleKey), events.TypePlacementDecided, roleKey)
	for _, role := range []string{roleViewer, roleConsole} {
		t.Run(role, func(t *testing.T) {
			bus := s.connect(role)
			stored, err := s.admin.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // each read deletes its consumer: the next makes it again
				ms, err := bus.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements)
				if err != nil || len(ms) != len(stored) {
					t.Fatalf("read %d placements, %v; want %d", len(ms), err, len(stored))
				}
			}
			ms, err := bus.Replay(ctx, events.StreamPlacement, natsbus.ReplayOptions{})
			if err != nil || len(ms) == 0 {
				t.Fatalf("replayed %d messages, %v; want some", len(ms), err)
			}
			if _, err := bus.FetchMessage(ctx, events.StreamPlacement, ms[0].Sequence); err != nil {
				t.Fatalf("get by sequence: %v", err)
			}
			// Two watches and a read of one stream at once, as the console
			// and a `get -w` beside it do.
			wctx, stop := context.WithCancel(ctx)
			defer stop()
			var seen []chan natsbus.Message
			for range 2 {
				sub, err := bus.Subscribe(wctx, events.StreamPlacement, []string{events.AllPlacements}, true)
				if err != nil {
					t.Fatalf("watch: %v", err)
				}
				ch := make(chan natsbus.Message, 8)
				go func() { _ = sub.Run(func(m natsbus.Message) { ch <- m }) }()
				seen = append(seen, ch)
			}
			if _, err := bus.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements); err != nil {
				t.Fatalf("read while watching: %v", err)
			}
			next := roleKey
			next.Name = "next-" + role
			s.publish(events.PlacementSubject(next), events.TypePlacementDecided, next)
			for i, ch := range seen {
				select {
				case m := <-ch:
					if m.Subject != events.PlacementSubject(next) {
						t.Errorf("watch %d saw %s, want %s", i, m.Subject, events.PlacementSubject(next))
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("watch %d saw nothing within 10s", i)
				}
			}
			noRefusal(t, bus)
		})
	}
}

// jsRequest sends a JetStream API request and returns its error, if any.
func jsRequest(bus *natsbus.Bus, subject string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	msg, err := bus.JetStream().Conn().Request(subject, data, 2*time.Second)
	if err != nil {
		return err
	}
	var resp struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if json.Unmarshal(msg.Data, &resp) == nil && resp.Error != nil {
		return errors.New(resp.Error.Description)
	}
	return nil
}

// TestNoReaderNorOtherDaemonCanStealADaemonsMessages tries every way into
// policyd's and schedulerd's durable consumers with a viewer's, the
// console's and an executord's credentials (each try on a fresh connection:
// a connection reports its first refusal), and then finds the consumers as
// they were, their messages neither taken nor acknowledged.
func TestNoReaderNorOtherDaemonCanStealADaemonsMessages(t *testing.T) {
	s := newRoleServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pol := policyd.Consumers(policyd.DefaultConfig())[0]
	sched := schedulerd.Consumers(schedulerd.DefaultConfig())[0] // its policy stream consumer, which executord's stream too
	for d, c := range map[string]natsbus.ConsumerSpec{"policyd": pol, "schedulerd": sched} {
		if _, err := s.connect(d).Bind(ctx, c); err != nil {
			t.Fatalf("%s binds %s: %v", d, c.Name, err)
		}
	}
	s.publish(events.InputSubject(roleKey), events.TypeObjectApplied, roleKey)
	s.publish(events.BindingSubject(roleKey), events.TypeBindingChanged, roleKey)

	type try struct {
		name, subject string
		body          any
	}
	tries := func(c natsbus.ConsumerSpec) []try {
		api := "$JS.API.CONSUMER."
		update := map[string]any{"stream_name": c.Stream, "config": map[string]any{
			"name": c.Name, "durable_name": c.Name, "filter_subject": "flotilla.>", "ack_policy": "explicit", "deliver_policy": "all"}}
		unnamed := map[string]any{"stream_name": c.Stream, "config": map[string]any{
			"name": c.Name, "filter_subject": "flotilla.>", "ack_policy": "explicit", "deliver_policy": "all"}}
		return []try{
			{"re-filters it", api + "CREATE." + c.Stream + "." + c.Name + ".flotilla.>", update},
			{"updates it", api + "CREATE." + c.Stream + "." + c.Name, update},
			{"updates it through the unnamed create", api + "CREATE." + c.Stream, unnamed},
			{"updates it the legacy way", api + "DURABLE.CREATE." + c.Stream + "." + c.Name, update},
			{"pulls from it", api + "MSG.NEXT." + c.Stream + "." + c.Name, map[string]any{"batch": 1}},
			{"acknowledges for it", "$JS.ACK." + c.Stream + "." + c.Name + ".1.1.1.1700000000000000000.0", nil},
			{"deletes it", api + "DELETE." + c.Stream + "." + c.Name, nil},
		}
	}
	for _, c := range []struct {
		role     string
		consumer natsbus.ConsumerSpec
	}{
		{roleViewer, pol}, {roleConsole, sched}, {roleViewer, sched}, {"executord", pol}, {"executord", sched}, {"healthd", sched},
	} {
		for _, tr := range tries(c.consumer) {
			t.Run(c.role+" "+tr.name+" ("+c.consumer.Name+")", func(t *testing.T) {
				bus := s.connect(c.role)
				if tr.name == "deletes it" {
					// The bus does not report a refused delete (a reader's
					// cleanup may meet one): the request goes unanswered.
					if err := jsRequest(bus, tr.subject, tr.body); err == nil {
						t.Errorf("%s answered, want it dropped", tr.subject)
					}
					return
				}
				go func() { _ = jsRequest(bus, tr.subject, tr.body) }()
				select {
				case err := <-bus.Refused():
					var r *natsbus.Refusal
					if !errors.As(err, &r) || r.Subject != tr.subject {
						t.Errorf("refused %v, want %s refused", err, tr.subject)
					}
				case <-time.After(5 * time.Second):
					t.Errorf("%s was not refused within 5s", tr.subject)
				}
			})
		}
	}
	for _, c := range []natsbus.ConsumerSpec{pol, sched} {
		co, err := s.admin.JetStream().Consumer(ctx, c.Stream, c.Name)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		info := co.CachedInfo()
		filters := info.Config.FilterSubjects
		if info.Config.FilterSubject != "" {
			filters = []string{info.Config.FilterSubject}
		}
		want := []any{c.Subjects, uint64(1), 0, uint64(0)}
		got := []any{filters, info.NumPending, info.NumAckPending, info.Delivered.Consumer}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: filters, pending, unacknowledged, delivered (-want +got):\n%s", c.Name, diff)
		}
	}
}

// TestEachDaemonBindsPullsAndAcknowledgesItsOwnConsumersOnItsRole: a
// message reaches each daemon's handler through its consumer and is
// acknowledged, on the daemon's own credential.
func TestEachDaemonBindsPullsAndAcknowledgesItsOwnConsumersOnItsRole(t *testing.T) {
	s := newRoleServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	excfg := executord.DefaultConfig()
	excfg.Instance = "i1"
	s.publish(events.InputSubject(roleKey), events.TypeObjectApplied, roleKey)
	s.publish(events.BindingSubject(roleKey), events.TypeBindingChanged, roleKey)
	s.publish(events.PlacementSubject(roleKey), events.TypePlacementDecided, roleKey)
	for _, c := range []struct {
		daemon   string
		consumer natsbus.ConsumerSpec
	}{
		{"policyd", policyd.Consumers(policyd.DefaultConfig())[0]},
		{"schedulerd", schedulerd.Consumers(schedulerd.DefaultConfig())[0]},
		{"executord", executord.Consumers(excfg, "cluster1")[0]},
		{"healthd", healthd.Consumers(healthd.DefaultConfig())[0]},
	} {
		t.Run(c.daemon, func(t *testing.T) {
			bus := s.connect(c.daemon)
			if _, err := bus.LatestPerSubject(ctx, c.consumer.Stream, c.consumer.Subjects...); err != nil {
				t.Fatalf("catch-up read: %v", err)
			}
			con, err := bus.Bind(ctx, c.consumer)
			if err != nil {
				t.Fatal(err)
			}
			if c.daemon == "healthd" {
				noRefusal(t, bus) // nothing on its subjects: bound is all
				return
			}
			handled := make(chan struct{}, 1)
			rctx, stop := context.WithCancel(ctx)
			defer stop()
			go func() {
				_ = con.Run(rctx, func(context.Context, events.Event) error {
					handled <- struct{}{}
					return nil
				})
			}()
			select {
			case <-handled:
			case <-time.After(15 * time.Second):
				t.Fatal("nothing handled within 15s")
			}
			deadline := time.Now().Add(10 * time.Second)
			for s.admin.ConsumerIdle(ctx, c.consumer.Stream, c.consumer.Name) != nil {
				if time.Now().After(deadline) {
					t.Fatalf("not acknowledged: %v", s.admin.ConsumerIdle(ctx, c.consumer.Stream, c.consumer.Name))
				}
				time.Sleep(100 * time.Millisecond)
			}
			noRefusal(t, bus)
		})
	}
}
