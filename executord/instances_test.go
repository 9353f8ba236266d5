package executord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// runPushInstance runs push-mode executord instance name on a connection
// of its own to url; kill closes it (eventstest.Instance).
func runPushInstance(t *testing.T, url string, cfg Config, name string) (kill func()) {
	t.Helper()
	cfg.Instance, cfg.Lease = name, time.Second
	return eventstest.Instance(t, url, func(bus *natsbus.Bus) func(context.Context) error {
		d, err := New(cfg, Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth(), Registry: prometheus.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		return d.Run
	})
}

// statusSources are the instances that published web's work statuses in
// cluster from binding revision rev on.
func statusSources(t *testing.T, bus *natsbus.Bus, cluster string, rev int64) map[string]bool {
	t.Helper()
	ms, err := bus.Replay(context.Background(), events.StreamWork, natsbus.ReplayOptions{Subjects: []string{events.WorkSubject(cluster, web)}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range ms {
		var s events.WorkStatus
		if m.Err == nil && events.Decode(m.Event, &s) == nil && s.BindingRevision >= rev {
			out[strings.TrimPrefix(m.Event.Source(), "/executord/")] = true
		}
	}
	return out
}

// Two push-mode executords share the members, one owner per cluster: only
// the owner applies to its cluster and reports it; when the owner of one
// is killed, the other takes its cluster over once the lease lapses and
// applies what is placed afterwards.
func TestTwoPushExecutordsServeEachClusterFromItsOwnerAndTheStandbyTakesOverAKilledOnesCluster(t *testing.T) {
	url, bus := eventstest.Server(t)
	_, _, key, cfg := pushModeSetup(t)
	members := map[string]*fakeMember{"member1": newFakeMember(t), "member2": newFakeMember(t)}
	for name, m := range members {
		publishMember(t, bus, key, name, m.srv.URL, events.TypeClusterRegistered, 1)
	}
	kill := map[string]func(){"a": runPushInstance(t, url, cfg, "a")}
	waitFor(t, "a to own both clusters", func() bool {
		return cmp.Equal(map[string]string{"member1": "a", "member2": "a"}, eventstest.Leases(t, bus, "executord"))
	})
	kill["b"] = runPushInstance(t, url, cfg, "b")
	var owners map[string]string
	waitFor(t, "a and b to own one cluster each", func() bool {
		owners = eventstest.Leases(t, bus, "executord")
		return len(owners) == 2 && owners["member1"] != owners["member2"]
	})

	publishPlacement(t, bus, placement(1, 0, on("member1", 1), on("member2", 1)))
	for name, m := range members {
		waitFor(t, "web applied in "+name, func() bool { return m.has("deployments/default/web") && len(statusSources(t, bus, name, 1)) > 0 })
	}
	time.Sleep(300 * time.Millisecond) // a second applier, were there one, would have reported by now
	for name := range members {
		if diff := cmp.Diff(map[string]bool{owners[name]: true}, statusSources(t, bus, name, 1)); diff != "" {
			t.Errorf("%s: instances that reported web (-want +got):\n%s", name, diff)
		}
	}

	dead, survivor := owners["member2"], owners["member1"]
	kill[dead]()
	waitFor(t, survivor+" to own both clusters", func() bool {
		return cmp.Equal(map[string]string{"member1": survivor, "member2": survivor}, eventstest.Leases(t, bus, "executord"))
	})
	publishPlacement(t, bus, placement(2, time.Second, on("member1", 1), on("member2", 1)))
	waitFor(t, "revision 2 reported in member2 by "+survivor, func() bool {
		return cmp.Equal(map[string]bool{survivor: true}, statusSources(t, bus, "member2", 2))
	})
}
