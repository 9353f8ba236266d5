package readmodel

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Reference features §7.2.7: `get` and `describe` show the template's
// status as its statusAggregation script computes it from the members.
func TestAggregatedStatus(t *testing.T) {
	sum := `function AggregateStatus(d, items) local r, names = 0, ""
	  for _, it in ipairs(items) do r = r + ((it.status or {}).ready or 0); names = names .. it.clusterName .. "=" .. tostring(it.applied) .. "/" .. it.health .. ";" end
	  d.status = {ready = r, seen = names}; return d end`
	binding := func(script string) *events.Binding {
		return &events.Binding{Key: myApp, Template: json.RawMessage(`{"kind":"RayCluster","spec":{}}`),
			Interpretation: &policy.Interpretation{Names: []string{"ray"}, StatusAggregation: script}}
	}
	work := []events.WorkStatus{
		{Key: myApp, Cluster: "cluster2", Phase: events.WorkFailed, Message: "no"},
		{Key: myApp, Cluster: "cluster1", Phase: events.WorkRunning, Health: events.WorkHealthy, Status: map[string]any{"ready": 3.0}},
		{Key: myApp, Cluster: "cluster3", Phase: events.WorkDeleted, Status: map[string]any{"ready": 9.0}},
	}
	cases := []struct {
		name    string
		b       *events.Binding
		want    map[string]any
		wantErr string
	}{
		{"the live works, sorted by cluster, summed by the script; applied false is absent", binding(sum),
			map[string]any{"ready": 3.0, "seen": "cluster1=true/Healthy;cluster2=nil/Unknown;"}, ""},
		{"no aggregation script: no aggregated status", &events.Binding{Key: myApp}, nil, ""},
		{"a failing script says why", binding(`function AggregateStatus(d, items) return nil end`), nil,
			"ResourceInterpreterCustomization(ray) AggregateStatus: expect the returned object type is table, but got nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := events.PlacementDecision{Key: myApp, Scheduled: true, Binding: c.b,
				Clusters: []events.TargetCluster{{Name: "cluster1"}, {Name: "cluster2"}}}
			got, err := FindTemplate([]events.PlacementDecision{p}, Work{Items: work}, "my-app", myApp.Namespace)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got.AggregatedStatus); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if got.AggregationError != c.wantErr {
				t.Errorf("error %q, want %q", got.AggregationError, c.wantErr)
			}
			// get -o yaml: the script's status is the template's.
			fleet := Fleet{Decisions: []events.PlacementDecision{p}, Work: Work{Items: work}}.Template(myApp).Status()
			if c.want != nil {
				if diff := cmp.Diff(c.want, fleet); diff != "" {
					t.Errorf("the template's status in get -o yaml (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// Decisions drops bindings but for what a statusAggregation script needs
// and the replicas the template asks for.
func TestDecisionsKeepOnlyTheAggregationScript(t *testing.T) {
	r := &recorder{t: t}
	tpl := json.RawMessage(`{"kind":"RayCluster"}`)
	full := &events.Binding{Key: myApp, APIVersion: "ray.io/v1", Generation: 2, Replicas: 3, Template: tpl,
		Interpretation: &policy.Interpretation{Names: []string{"ray"}, StatusAggregation: "agg", Health: "h", ReplicaResource: "r"}}
	plain := &events.Binding{Key: mySvc, Replicas: 3, Template: tpl, Interpretation: &policy.Interpretation{Names: []string{"x"}, Health: "h"}}
	got := Decisions([]Stored{
		r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: myApp, Binding: full}),
		r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: mySvc, Binding: plain}),
	})
	want := []*events.Binding{
		{Key: myApp, APIVersion: "ray.io/v1", Generation: 2, Replicas: 3, Template: tpl, Interpretation: &policy.Interpretation{Names: []string{"ray"}, StatusAggregation: "agg"}},
		{Key: mySvc, Replicas: 3},
	}
	for i, p := range got {
		if diff := cmp.Diff(want[i], p.Binding, cmpopts.IgnoreUnexported(events.Binding{})); diff != "" {
			t.Errorf("decision %d's binding (-want +got):\n%s", i, diff)
		}
	}
}
