package policyd

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// runPolicyd runs a policyd on bus until the returned stop is called.
func runPolicyd(t *testing.T, bus *natsbus.Bus) func() {
	t.Helper()
	d, err := New(DefaultConfig(), Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	return eventstest.Running(t, d.Run)
}

// publishInput publishes e on the input subject of the object it names and
// returns its stream sequence.
func publishInput(t *testing.T, bus *natsbus.Bus, e events.Event) uint64 {
	t.Helper()
	_, key, err := decodeRef(context.Background(), e, "input")
	if err != nil {
		t.Fatal(err)
	}
	ack, err := bus.PublishAck(context.Background(), events.InputSubject(key), e)
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

func deletion(t *testing.T, apiVersion, kind, name string) events.Event {
	t.Helper()
	e, err := events.New(events.TypeObjectDeleted, "/test", name, map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name, "namespace": "default"}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// What a killed policyd had taken is delivered again after its AckWait,
// while input published meanwhile is handled at once: an input redelivered
// after a newer one of the same object was handled changes nothing, so the
// object ends as the newer input left it (as if they had been handled in
// order), whether the newer was handled by the same policyd or by one that
// stopped before the redelivery.
func TestAnInputRedeliveredAfterANewerOneOfItsObjectChangesNothing(t *testing.T) {
	eight := strings.Replace(deployment, "replicas: 6", "replicas: 8", 1)
	for _, c := range []struct {
		name string
		// before is handled in order, first; taken is taken by a killed
		// policyd and delivered again after newer was handled.
		before, taken, newer func(t *testing.T) events.Event
		// restart: newer is handled by a policyd that stops before the
		// redelivery, which the next one handles.
		restart bool
		// want: the template's replicas in its accepted record; "" none.
		want string
	}{
		{
			name:  "an apply redelivered after its object's deletion does not bring the object back",
			taken: func(t *testing.T) events.Event { return applied(t, deployment) },
			newer: func(t *testing.T) events.Event { return deletion(t, "apps/v1", "Deployment", "my-app") },
		},
		{
			name:    "an apply redelivered after its object's deletion, handled by a restarted policyd, does not bring the object back",
			taken:   func(t *testing.T) events.Event { return applied(t, deployment) },
			newer:   func(t *testing.T) events.Event { return deletion(t, "apps/v1", "Deployment", "my-app") },
			restart: true,
		},
		{
			name:  "an apply redelivered after a newer apply does not roll the content back",
			taken: func(t *testing.T) events.Event { return applied(t, deployment) },
			newer: func(t *testing.T) events.Event { return applied(t, eight) },
			want:  `"replicas":8`,
		},
		{
			name:    "an apply redelivered after a newer apply, handled by a restarted policyd, does not roll the content back",
			taken:   func(t *testing.T) events.Event { return applied(t, deployment) },
			newer:   func(t *testing.T) events.Event { return applied(t, eight) },
			restart: true,
			want:    `"replicas":8`,
		},
		{
			name:   "a deletion redelivered after its object was applied again does not remove it",
			before: func(t *testing.T) events.Event { return applied(t, deployment) },
			taken:  func(t *testing.T) events.Event { return deletion(t, "apps/v1", "Deployment", "my-app") },
			newer:  func(t *testing.T) events.Event { return applied(t, eight) },
			want:   `"replicas":8`,
		},
		{
			name:   "an apply taken by a killed policyd and redelivered with nothing newer is handled",
			before: func(t *testing.T) events.Event { return applied(t, configMap) },
			taken:  func(t *testing.T) events.Event { return applied(t, deployment) },
			want:   `"replicas":6`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, bus := eventstest.Server(t)
			spec := Consumers(DefaultConfig())[0]
			seq := publishInput(t, bus, applied(t, policyDoc("match-all", "", 0)))
			if c.before != nil {
				seq = publishInput(t, bus, c.before(t))
			}
			stop := runPolicyd(t, bus)
			eventstest.ConsumerSettled(t, bus, spec, seq, 0)
			stop()

			seq = publishInput(t, bus, c.taken(t))
			// The newer input must be handled before the taken one comes
			// back: under the whole suite's load, starting the daemon and
			// handling it took more than 2 s once.
			eventstest.TakenByAKilledProcess(t, bus, spec, 1, 5*time.Second)
			stop = runPolicyd(t, bus)
			if c.newer != nil {
				seq = publishInput(t, bus, c.newer(t))
				if c.restart {
					eventstest.ConsumerSettled(t, bus, spec, seq, 1)
					stop()
					stop = runPolicyd(t, bus)
				}
			}
			eventstest.ConsumerSettled(t, bus, spec, seq, 0)
			stop()

			p, err := readPublished(context.Background(), bus)
			if err != nil {
				t.Fatal(err)
			}
			rec, ok := p.Records[deploymentKey]
			switch {
			case c.want == "" && (ok || p.Live[deploymentKey]):
				t.Errorf("the deleted template is back: generation %d, %s (binding live: %v)", rec.Generation, rec.Object, p.Live[deploymentKey])
			case c.want != "" && !strings.Contains(string(rec.Object), c.want):
				t.Errorf("the template's record holds %s, want %s", rec.Object, c.want)
			case c.want != "" && !p.Live[deploymentKey]:
				t.Errorf("the template's binding is not live")
			}
		})
	}
}
