package policyd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/readmodel"
)

// runInstance runs policyd instance name on its own connection to url.
func runInstance(t *testing.T, url, name string) func() {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Instance, cfg.Partitions, cfg.Lease = name, 4, time.Second
	d, err := New(cfg, Deps{Bus: eventstest.Connect(t, url), Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	return eventstest.Running(t, d.Run)
}

// app is Deployment name, which the policy "all" claims.
func app(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(deployment, "my-app", name), "replicas: 6", "replicas: 2")
}

// bound reads every binding.changed stored: the revisions per template
// name, in order, and the instance that published each template's last.
func bound(t *testing.T, bus *natsbus.Bus) (revisions map[string][]int64, by map[string]string) {
	t.Helper()
	ms, err := bus.Replay(context.Background(), events.StreamPolicy, natsbus.ReplayOptions{Subjects: []string{events.AllBindings}})
	if err != nil {
		t.Fatal(err)
	}
	revisions, by = map[string][]int64{}, map[string]string{}
	for _, m := range ms {
		var b events.Binding
		if m.Err != nil || events.Type(m.Event.Type()) != events.TypeBindingChanged || events.Decode(m.Event, &b) != nil {
			continue
		}
		revisions[b.Key.Name] = append(revisions[b.Key.Name], b.Revision)
		by[b.Key.Name] = strings.TrimPrefix(m.Event.Source(), "/policyd/")
	}
	return revisions, by
}

// Two policyd instances each read every input: a policy applied while
// both run reaches both, so every template is bound, once, by the
// instance holding its partition, whichever instance that is; an instance
// started beside a running one replays the input it missed; and when one
// stops, the other binds everything that follows.
func TestTwoPolicydInstancesBindEveryTemplateOnceAndOneBindsAllWhenTheOtherStops(t *testing.T) {
	url, bus := eventstest.Server(t)
	stopA := runInstance(t, url, "a")
	eventstest.Eventually(t, "a to hold every partition", func() bool { return cmp.Equal(map[string]int{"a": 4}, eventstest.PartitionsHeld(t, bus, "policyd")) })
	const early = 6
	for i := range early {
		publishInput(t, bus, applied(t, app(fmt.Sprintf("app-%02d", i))))
	}
	runInstance(t, url, "b")
	eventstest.Eventually(t, "a and b to hold two partitions each", func() bool {
		return cmp.Equal(map[string]int{"a": 2, "b": 2}, eventstest.PartitionsHeld(t, bus, "policyd"))
	})
	// The policy comes after the templates: each instance binds its own
	// partitions' templates, which it knows only by reading every input.
	publishInput(t, bus, applied(t, policyDoc("all", "", 0)))
	const templates = 24
	for i := early; i < templates; i++ {
		publishInput(t, bus, applied(t, app(fmt.Sprintf("app-%02d", i))))
	}
	var revisions map[string][]int64
	var by map[string]string
	eventstest.Eventually(t, "every template bound", func() bool { revisions, by = bound(t, bus); return len(revisions) == templates })
	time.Sleep(500 * time.Millisecond) // a second binding, were one made, would be stored by now
	revisions, by = bound(t, bus)
	binders := map[string]bool{}
	for name, revs := range revisions {
		if diff := cmp.Diff([]int64{1}, revs); diff != "" {
			t.Errorf("%s: binding revisions published (-want +got):\n%s", name, diff)
		}
		binders[by[name]] = true
	}
	if diff := cmp.Diff(map[string]bool{"a": true, "b": true}, binders); diff != "" {
		t.Errorf("instances that bound templates (-want +got):\n%s", diff)
	}
	accepted, err := bus.Replay(context.Background(), events.StreamPolicy, natsbus.ReplayOptions{Subjects: []string{events.ObjectSubject(events.KeyOf("policy.karmada.io/v1alpha1", "PropagationPolicy", "default", "all"))}})
	if err != nil {
		t.Fatal(err)
	}
	if len(accepted) != 1 {
		t.Errorf("the policy's records stored: %d, want 1", len(accepted))
	}

	stopA()
	eventstest.Eventually(t, "b to hold every partition", func() bool { return cmp.Equal(map[string]int{"b": 4}, eventstest.PartitionsHeld(t, bus, "policyd")) })
	for i := range templates {
		publishInput(t, bus, applied(t, strings.Replace(app(fmt.Sprintf("app-%02d", i)), "replicas: 2", "replicas: 3", 1)))
	}
	eventstest.Eventually(t, "every template bound again", func() bool {
		revisions, by = bound(t, bus)
		for _, revs := range revisions {
			if revs[len(revs)-1] != 2 {
				return false
			}
		}
		return true
	})
	for name, revs := range revisions {
		if diff := cmp.Diff([]int64{1, 2}, revs); diff != "" {
			t.Errorf("%s: binding revisions published (-want +got):\n%s", name, diff)
		}
		if by[name] != "b" {
			t.Errorf("%s: revision 2 published by %s, want b", name, by[name])
		}
	}
}

// What an instance took into its state for a partition it did not hold
// is published by it when it takes that partition over and the stream
// lacks it (its last owner stopped before publishing); what the stream
// already holds is not published again.
func TestAPartitionsNewOwnerPublishesWhatItsLastOwnerHadNot(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	owned := false
	h.SetOwner(func(events.ObjectKey) bool { return owned }, nil)
	ctx := context.Background()
	var two events.Event
	for _, doc := range []string{policyDoc("all", "", 0), app("one"), app("two")} {
		e := applied(t, doc)
		two = e // the last
		if err := h.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.Events) != 0 {
		t.Fatalf("an instance holding no partition published %d events", len(rec.Events))
	}
	// The stream holds the policy's record and app "one"'s binding: the
	// last owner published those and stopped.
	stored := readmodel.NewPublished()
	one := events.KeyOf("apps/v1", "Deployment", "default", "one")
	pol := events.KeyOf("policy.karmada.io/v1alpha1", "PropagationPolicy", "default", "all")
	stored.Records[pol] = h.st.records[pol]
	stored.Bindings[one], stored.Live[one] = h.st.bindings[one], true
	owned = true
	n, err := h.TakeOver(ctx, published{Published: stored}, nil, nil, func(events.ObjectKey) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rec.Events {
		got = append(got, p.Event.Type()+" "+p.Event.Subject()+" answering "+events.CausationID(p.Event))
	}
	// It answers the input that caused it: the CLI that applied "two" waits for that.
	want := []string{string(events.TypeBindingChanged) + " " + events.KeyOf("apps/v1", "Deployment", "default", "two").String() + " answering " + two.ID()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("published on taking over (-want +got):\n%s", diff)
	}
	if n != len(want) {
		t.Errorf("TakeOver reported %d events, want %d", n, len(want))
	}
}

// An instance leaves a template of a partition it does not hold to that
// partition's owner, unread; taking the partition over, it handles the
// template's latest input, which the stream holds and the published
// records do not yet carry, and binds it.
func TestATemplateLeftToItsOwnerIsBoundByTheInstanceTakingItsPartitionOver(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	owned := false
	h.SetOwner(func(events.ObjectKey) bool { return owned }, nil)
	three := events.KeyOf("apps/v1", "Deployment", "default", "three")
	input := Input{Event: applied(t, app("three")), Subject: events.InputSubject(three), Sequence: 7}
	delivered := events.WithDelivery(context.Background(), events.Delivery{Stream: events.StreamInput, Subject: input.Subject, Sequence: input.Sequence, Delivered: 1})
	if err := h.Handle(context.Background(), applied(t, policyDoc("all", "", 0))); err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(delivered, input.Event); err != nil {
		t.Fatal(err)
	}
	if _, kept := h.st.records[three]; kept || len(rec.Events) != 0 {
		t.Fatalf("a template of a partition not held was kept (%v) or published for (%d events)", kept, len(rec.Events))
	}
	owned = true
	if _, err := h.TakeOver(context.Background(), published{Published: readmodel.NewPublished()}, nil, []Input{input}, func(events.ObjectKey) bool { return true }); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range bindings(rec) {
		got = append(got, fmt.Sprintf("%s revision %d policy %s", b.Key.Name, b.Revision, b.Policy.Name))
	}
	if diff := cmp.Diff([]string{"three revision 1 policy all"}, got); diff != "" {
		t.Errorf("bindings published on taking over (-want +got):\n%s", diff)
	}
}

// An input of a partition this instance holds but has not loaded yet
// (it arrived after the take-over read the stream) waits for the take-over
// and is handled after it: the template is bound, answering that input.
// Handled at once it would be dropped, the partition's state not being
// this instance's yet, and the take-over, which read the stream before it
// arrived, would not see it either.
func TestAnInputArrivingBeforeItsPartitionIsLoadedIsHandledAfterTheTakeOver(t *testing.T) {
	_, bus := eventstest.Server(t)
	ctx := context.Background()
	if err := bus.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Instance, cfg.Partitions, cfg.Lease = "a", 4, time.Second
	d, err := New(cfg, Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	in, err := bus.Join(ctx, natsbus.InstanceOptions{Daemon: "policyd", Instance: "a", Partitions: 4, Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	if _, _, err := in.Balance(ctx, natsbus.PartitionItems(n)); err != nil {
		t.Fatal(err)
	}
	d.wire(in, n) // every partition held, none loaded
	publishInput(t, bus, applied(t, policyDoc("all", "", 0)))
	late := applied(t, app("late"))
	key := events.KeyOf("apps/v1", "Deployment", "default", "late")
	delivered := events.WithDelivery(ctx, events.Delivery{Stream: events.StreamInput, Subject: events.InputSubject(key), Sequence: 1000, Delivered: 1})
	if err := d.handleInput(delivered, late, in, n); err != nil {
		t.Fatal(err)
	}
	if revisions, _ := bound(t, bus); len(revisions) != 0 {
		t.Fatalf("bound before the partition was loaded: %v", revisions)
	}
	d.takeOver(ctx, in, n)
	revisions, by := bound(t, bus)
	if diff := cmp.Diff(map[string][]int64{"late": {1}}, revisions); diff != "" || by["late"] != "a" {
		t.Fatalf("bindings after the take-over (-want +got):\n%s by %v", diff, by)
	}
	ms, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.BindingSubject(key))
	if err != nil || len(ms) != 1 {
		t.Fatalf("the binding of late: %v, %d messages", err, len(ms))
	}
	if got := events.CausationID(ms[0].Event); got != late.ID() {
		t.Errorf("the binding answers %q, want the parked input %q", got, late.ID())
	}
}

// A lone instance whose lease view lapsed keeps taking inputs into its
// state without publishing; holding its partitions again it publishes
// what its state holds newer than the stream, and also the rejection of
// an input handled meanwhile (the CLI waits for it) unless a newer input
// of the same object was handled since.
func TestARejectionDuringALapseIsPublishedWhenThePartitionIsHeldAgain(t *testing.T) {
	bad := strings.Replace(app("bad"), "replicas: 2", "replicas: -1", 1)
	tests := []struct {
		name   string
		inputs []string // handled during the lapse, in order
		want   []string
	}{
		{"the rejection is published, answering its input", []string{bad}, []string{string(events.TypeObjectRejected) + " answering input 1"}},
		{"a valid input after it: no rejection, the binding", []string{bad, app("bad")}, []string{string(events.TypeBindingChanged) + " answering input 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &eventstest.Recorder{}
			h := NewHandler(rec, "t", zap.NewNop())
			held := true
			h.SetOwner(func(events.ObjectKey) bool { return held }, func(events.ObjectKey) bool { return true })
			if err := h.Handle(context.Background(), applied(t, policyDoc("all", "", 0))); err != nil {
				t.Fatal(err)
			}
			rec.Events = nil
			held = false // the lapse
			key := events.KeyOf("apps/v1", "Deployment", "default", "bad")
			ids := map[string]string{}
			for i, doc := range tt.inputs {
				e := applied(t, doc)
				ids[e.ID()] = fmt.Sprintf("input %d", i+1)
				ctx := events.WithDelivery(context.Background(), events.Delivery{Stream: events.StreamInput, Subject: events.InputSubject(key), Sequence: uint64(10 + i), Delivered: 1})
				_ = h.Handle(ctx, e) // a rejection is a permanent error, as before
			}
			if len(rec.Events) != 0 {
				t.Fatalf("published %d events during the lapse", len(rec.Events))
			}
			held = true
			if _, err := h.TakeOver(context.Background(), published{Published: readmodel.NewPublished()}, nil, nil, func(events.ObjectKey) bool { return true }); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range rec.Events {
				if p.Event.Subject() == key.String() && p.Event.Type() != string(events.TypeObjectAccepted) {
					got = append(got, p.Event.Type()+" answering "+ids[events.CausationID(p.Event)])
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("published on holding the partition again (-want +got):\n%s", diff)
			}
		})
	}
}

// An instance taking a partition over handles the latest inputs its last
// owner may not have finished; one it rejects is answered unless the
// stream already holds the rejection of that very input (the last owner
// published it before it stopped).
func TestATakeOverAnswersARejectionItsLastOwnerDidNotPublish(t *testing.T) {
	bad := strings.Replace(app("bad"), "replicas: 2", "replicas: -1", 1)
	key := events.KeyOf("apps/v1", "Deployment", "default", "bad")
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("rejection stored: %t", stored), func(t *testing.T) {
			rec := &eventstest.Recorder{}
			h := NewHandler(rec, "t", zap.NewNop())
			owned := false
			h.SetOwner(func(events.ObjectKey) bool { return owned }, func(events.ObjectKey) bool { return owned })
			input := Input{Event: applied(t, bad), Subject: events.InputSubject(key), Sequence: 7}
			pub := published{Published: readmodel.NewPublished(), rejected: map[events.ObjectKey]string{}}
			if stored {
				pub.rejected[key] = input.Event.ID()
			}
			owned = true
			if _, err := h.TakeOver(context.Background(), pub, nil, []Input{input}, func(events.ObjectKey) bool { return true }); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range rec.OfType(events.TypeObjectRejected) {
				got = append(got, events.CausationID(p.Event))
			}
			var want []string
			if !stored {
				want = []string{input.Event.ID()}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rejections published (-want +got):\n%s", diff)
			}
		})
	}
}

// A template of a partition another instance holds, applied before the
// first interpreter customization, was skipped by this instance; once a
// customization exists every template is shared, and the instance reads
// the ones it skipped, so that a dependency script of a template it holds
// finds one in the other's partition.
func TestATemplateSkippedBeforeTheFirstInterpreterIsFoundByDependencyScripts(t *testing.T) {
	url, bus := eventstest.Server(t)
	runInstance(t, url, "a")
	runInstance(t, url, "b")
	eventstest.Eventually(t, "a and b to hold two partitions each", func() bool {
		return cmp.Equal(map[string]int{"a": 2, "b": 2}, eventstest.PartitionsHeld(t, bus, "policyd"))
	})
	_, leases, _, err := bus.Instances(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	holder := map[string]string{}
	for _, l := range leases {
		if l.Daemon == "policyd" {
			holder[l.Work] = l.Instance
		}
	}
	holderOf := func(k events.ObjectKey) string { return holder[events.PartitionItem(events.Partition(k, 4))] }
	rc := events.KeyOf("ray.io/v1", "RayCluster", "default", "rc")
	cfg := ""
	for i := range 64 { // a RayConfig in a partition the other instance holds
		name := fmt.Sprintf("cfg-%d", i)
		if holderOf(events.KeyOf("ray.io/v1", "RayConfig", "default", name)) != holderOf(rc) {
			cfg = name
			break
		}
	}
	if cfg == "" {
		t.Fatal("no RayConfig name falls in the other instance's partitions")
	}
	publishInput(t, bus, applied(t, rayPolicy))
	publishInput(t, bus, applied(t, "apiVersion: ray.io/v1\nkind: RayConfig\nmetadata: {name: "+cfg+", namespace: default}\nspec: {a: b}\n"))
	publishInput(t, bus, applied(t, strings.Replace(rayCluster, "configName: cfg", "configName: "+cfg, 1)))
	eventstest.Eventually(t, "rc bound", func() bool { r, _ := bound(t, bus); return len(r["rc"]) > 0 })
	publishInput(t, bus, applied(t, ricDoc("ray", `    dependencyInterpretation:
      luaScript: |
        function GetDependencies(o) return {{apiVersion = "ray.io/v1", kind = "RayConfig", namespace = o.metadata.namespace, name = o.spec.configName}} end
`)))
	want := "default/RayConfig.ray.io/" + cfg
	eventstest.Eventually(t, "rc's binding to carry "+want+" as a dependency", func() bool {
		ms, err := bus.LatestPerSubject(context.Background(), events.StreamPolicy, events.BindingSubject(rc))
		if err != nil || len(ms) != 1 {
			return false
		}
		var b events.Binding
		if events.Decode(ms[0].Event, &b) != nil {
			return false
		}
		for _, d := range b.Dependencies {
			if d.Key.String() == want {
				return true
			}
		}
		return false
	})
}
