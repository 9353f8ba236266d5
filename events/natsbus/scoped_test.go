package natsbus_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// The scoped grant of a member cluster's executord (what
// `creds issue executord NAME --cluster cluster1` derives): its
// assignments, its statuses and its dead letters, through its durable
// consumer and its reader only.
const (
	memberConsumer = "executord-cluster1"
	memberReader   = "executord-cluster1-read"
)

var memberGrant = natsbus.Grant{
	Publish: []string{"flotilla.work.cluster1.*.*.*.*"},
	Consume: []natsbus.ConsumerSpec{{Name: memberConsumer, Stream: events.StreamWork, Subjects: []string{events.AssignmentsOf("cluster1")}}},
	Reader:  memberReader,
	Scoped: []natsbus.ScopedRead{
		{Stream: events.StreamWork, Filter: events.AssignmentsOf("cluster1")},
		{Stream: events.StreamWork, Filter: events.WorkOf("cluster1")},
		{Stream: events.StreamDeadLetter, Filter: events.DeadLetterSubject(memberConsumer)},
	},
}

// scopedSetup stores an assignment for cluster1 and one for cluster2, binds
// cluster2's consumer, and returns the server's URL and the member
// credential of cluster1.
func scopedSetup(t *testing.T) (string, string) {
	t.Helper()
	url, admin := securedServer(t)
	ctx := context.Background()
	for _, c := range []string{"cluster1", "cluster2"} {
		k := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "only-" + c}
		e, err := events.New(events.TypeWorkAssigned, "/test", k.String(), events.PlacementDecision{Key: k, Clusters: []events.TargetCluster{{Name: c, Replicas: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Publish(ctx, events.AssignmentSubject(c, k), e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Bind(ctx, natsbus.ConsumerSpec{Name: "executord-cluster2", Stream: events.StreamWork, Subjects: []string{events.AssignmentsOf("cluster2")}}); err != nil {
		t.Fatal(err)
	}
	return url, issue(t, admin, "member", "member-cluster1")
}

func connectScoped(t *testing.T, url, creds string) *natsbus.Bus {
	t.Helper()
	bus, err := natsbus.Connect(context.Background(), url, natsbus.Options{Name: t.Name(), Credentials: creds, Reader: memberReader})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.Close)
	return bus
}

func TestAScopedCredentialReadsItsClustersAssignmentsThroughItsOwnConsumers(t *testing.T) {
	url, creds := scopedSetup(t)
	bus := connectScoped(t, url, creds)
	ctx := context.Background()
	for range 2 { // the reader is deleted after each read, so it can be made again
		ms, err := bus.LatestPerSubject(ctx, events.StreamWork, events.AssignmentsOf("cluster1"))
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 1 || !strings.HasSuffix(ms[0].Subject, "only-cluster1") {
			t.Fatalf("read %d messages (%v), want cluster1's one assignment", len(ms), ms)
		}
	}
	c, err := bus.Bind(ctx, memberGrant.Consume[0])
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_ = c.Run(runCtx, func(_ context.Context, e events.Event) error {
			got <- e.Subject()
			return nil
		})
	}()
	select {
	case s := <-got:
		if s != "default/Deployment.apps/only-cluster1" {
			t.Errorf("its consumer delivered %s, want cluster1's assignment", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("its consumer delivered nothing")
	}
	select {
	case err := <-bus.Refused():
		t.Errorf("refused: %v", err)
	default:
	}
}

// TestAScopedCredentialIsRefusedEveryReadOfAnotherClustersWork tries every
// way into cluster2's assignment, each on a fresh connection (a connection
// reports its first refusal).
func TestAScopedCredentialIsRefusedEveryReadOfAnotherClustersWork(t *testing.T) {
	url, creds := scopedSetup(t)
	other := events.AssignmentSubject("cluster2", events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "only-cluster2"})
	request := func(bus *natsbus.Bus, subject string, body []byte) {
		_, _ = bus.JetStream().Conn().Request(subject, body, 2*time.Second)
	}
	for _, c := range []struct {
		name    string
		try     func(ctx context.Context, bus *natsbus.Bus)
		subject string
	}{
		{"reading another cluster's assignments", func(ctx context.Context, bus *natsbus.Bus) {
			_, _ = bus.LatestPerSubject(ctx, events.StreamWork, events.AssignmentsOf("cluster2"))
		}, "$JS.API.CONSUMER.CREATE.FLOTILLA_WORK." + memberReader + ".flotilla.assignment.cluster2.>"},
		{"reading the whole stream", func(ctx context.Context, bus *natsbus.Bus) {
			_, _ = bus.LatestPerSubject(ctx, events.StreamWork, events.AllAssigned)
		}, "$JS.API.CONSUMER.CREATE.FLOTILLA_WORK." + memberReader + ".flotilla.assignment.>"},
		{"getting a message by sequence", func(ctx context.Context, bus *natsbus.Bus) {
			_, _ = bus.FetchMessage(ctx, events.StreamWork, 2)
		}, "$JS.API.STREAM.INFO.FLOTILLA_WORK"},
		{"getting the last message of its subject directly", func(_ context.Context, bus *natsbus.Bus) {
			request(bus, "$JS.API.DIRECT.GET.FLOTILLA_WORK."+other, nil)
		}, "$JS.API.DIRECT.GET.FLOTILLA_WORK." + other},
		{"getting a message directly by sequence", func(_ context.Context, bus *natsbus.Bus) {
			request(bus, "$JS.API.DIRECT.GET.FLOTILLA_WORK", []byte(`{"seq":2}`))
		}, "$JS.API.DIRECT.GET.FLOTILLA_WORK"},
		{"pulling from another cluster's consumer", func(_ context.Context, bus *natsbus.Bus) {
			request(bus, "$JS.API.CONSUMER.MSG.NEXT.FLOTILLA_WORK.executord-cluster2", []byte(`{"batch":1}`))
		}, "$JS.API.CONSUMER.MSG.NEXT.FLOTILLA_WORK.executord-cluster2"},
		{"reading a placement", func(ctx context.Context, bus *natsbus.Bus) {
			_, _ = bus.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements)
		}, "$JS.API.CONSUMER.CREATE.FLOTILLA_PLACEMENT." + memberReader + ".flotilla.placement.>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bus := connectScoped(t, url, creds)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			go c.try(ctx, bus)
			if r := refusal(t, bus, 5*time.Second); r.Subject != c.subject {
				t.Errorf("refused %q, want %s refused", r.Error(), c.subject)
			}
		})
	}
}

// TestTheServerHoldsAConsumersFilterToTheOneInItsCreateSubject: a create
// request whose subject carries cluster1's filter (allowed) and whose body
// asks for cluster2's is refused by the server itself.
func TestTheServerHoldsAConsumersFilterToTheOneInItsCreateSubject(t *testing.T) {
	url, creds := scopedSetup(t)
	bus := connectScoped(t, url, creds)
	body, err := json.Marshal(map[string]any{"stream_name": events.StreamWork, "config": map[string]any{
		"name": memberReader, "filter_subject": events.AssignmentsOf("cluster2"), "ack_policy": "none", "deliver_policy": "all"}})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := bus.JetStream().Conn().Request("$JS.API.CONSUMER.CREATE."+events.StreamWork+"."+memberReader+"."+events.AssignmentsOf("cluster1"), body, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error == nil || !strings.Contains(resp.Error.Description, "filter") {
		t.Fatalf("create with another cluster's filter in the body answered %s, want refused", msg.Data)
	}
}
