package bench

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/internal/cputime"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/schedulerd"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

// handlersPath is policyd's and schedulerd's handlers joined without a
// bus: what flotilla bench's path costs beyond BenchmarkPlacementPathFloor
// (the daemons' own work per template: decoding, validation, the binding,
// the decision, encoding), measured without the bus's noise.
type handlersPath struct {
	policyd, schedulerd      *eventstest.Recorder
	policydH                 *policyd.Handler
	schedulerdH              *schedulerd.Handler
	templates                []subjected
	bindingsSeen, placedSeen int
}

func newHandlersPath(tb testing.TB, clusters, templates int) *handlersPath {
	tb.Helper()
	ctx := context.Background()
	p := &handlersPath{policyd: &eventstest.Recorder{}, schedulerd: &eventstest.Recorder{}}
	p.policydH = policyd.NewHandler(p.policyd, "bench", zap.NewNop())
	p.schedulerdH = schedulerd.NewHandler(p.schedulerd, "bench", core.New(plugins.DefaultProfile()), nil)
	members, err := benchClusters(clusters)
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range members {
		if err := p.schedulerdH.Handle(ctx, m.event); err != nil {
			tb.Fatalf("%s: %v", m.subject, err)
		}
	}
	pol, err := benchPolicy("static")
	if err != nil {
		tb.Fatal(err)
	}
	e, err := events.New(events.TypeObjectApplied, benchSource, "policy", pol)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.policydH.Handle(ctx, e); err != nil {
		tb.Fatalf("policy: %v", err)
	}
	for i := range templates {
		k := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: benchNamespace, Name: fmt.Sprintf("app-%05d", i)}
		obj, err := benchTemplate(k.Name, int64(10+i%10))
		if err != nil {
			tb.Fatal(err)
		}
		e, err := events.New(events.TypeObjectApplied, benchSource, k.String(), obj)
		if err != nil {
			tb.Fatal(err)
		}
		p.templates = append(p.templates, subjected{events.InputSubject(k), e})
	}
	p.policyd.Events, p.schedulerd.Events = nil, nil
	return p
}

// place runs template i through policyd and the binding it publishes
// through schedulerd, and returns the placement published.
func (p *handlersPath) place(tb testing.TB, i int) events.Event {
	ctx := context.Background()
	if err := p.policydH.Handle(ctx, p.templates[i].event); err != nil {
		tb.Fatalf("policyd: %v", err)
	}
	bindings := p.policyd.OfType(events.TypeBindingChanged)
	if len(bindings) != p.bindingsSeen+1 {
		tb.Fatalf("template %d: %d bindings published, want 1", i, len(bindings)-p.bindingsSeen)
	}
	p.bindingsSeen++
	if err := p.schedulerdH.Handle(ctx, bindings[len(bindings)-1].Event); err != nil {
		tb.Fatalf("schedulerd: %v", err)
	}
	placed := p.schedulerd.OfType(events.TypePlacementDecided)
	if len(placed) != p.placedSeen+1 {
		tb.Fatalf("template %d: %d placements published, want 1", i, len(placed)-p.placedSeen)
	}
	// Keep the recorders short: their scans are the benchmark's, not the path's.
	p.policyd.Events, p.schedulerd.Events, p.bindingsSeen, p.placedSeen = nil, nil, 0, 0
	return placed[len(placed)-1].Event
}

// TestTheHandlersPathPlacesEveryTemplateByItsWeights checks what
// BenchmarkHandlersPath measures: every template is placed, with all its
// replicas, on the clusters of the policy's weights.
func TestTheHandlersPathPlacesEveryTemplateByItsWeights(t *testing.T) {
	p := newHandlersPath(t, 100, 20)
	for i := range 20 {
		var d events.PlacementDecision
		if err := events.Decode(p.place(t, i), &d); err != nil {
			t.Fatal(err)
		}
		sum := int32(0)
		for _, c := range d.Clusters {
			sum += c.Replicas
		}
		if want := int32(10 + i%10); sum != want || len(d.Clusters) == 0 {
			t.Fatalf("template %d placed %d replicas on %v, want %d", i, sum, d.Clusters, want)
		}
	}
}

// BenchmarkHandlersPath is one template through policyd's and schedulerd's
// handlers, with flotilla bench's shapes (a Deployment of 10-19 replicas,
// one Divided/Weighted policy over 100 clusters), and no bus.
func BenchmarkHandlersPath(b *testing.B) {
	p := newHandlersPath(b, 100, b.N+1)
	p.place(b, b.N) // the codec compiles its types on first use
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := range b.N {
		p.place(b, i)
	}
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
