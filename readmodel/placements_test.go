package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flotilla-io/flotilla/events"
)

func TestExplainPlacement(t *testing.T) {
	r := &recorder{t: t}
	settings := events.ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "settings"}
	binding := &events.Binding{Key: myApp, Replicas: 3, Dependencies: []events.Dependency{{Key: settings, APIVersion: "v1", Template: []byte(`{}`)}}}
	decided := r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: myApp, Binding: binding, Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 3}}})
	withdrawn := r.stored(events.TypePlacementRemoved, events.PlacementDecision{Key: mySvc})
	ms := []Stored{decided, withdrawn}
	for _, tt := range []struct {
		name    string
		ref     string
		want    events.PlacementDecision
		wantErr string
	}{
		{"a placed template's decision comes with its binding", "deploy/my-app", events.PlacementDecision{Key: myApp, Binding: binding, Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 3}}}, ""},
		{"a dependency propagateDeps carries names the workload it goes with", "configmap/settings", events.PlacementDecision{},
			"configmap/settings -n default has no placement of its own: it goes with deployment/my-app (on cluster1=3) (propagateDeps), wherever that goes"},
		{"a withdrawn placement says the template was deleted", "svc/my-app", events.PlacementDecision{Key: mySvc}, "svc/my-app -n default was deleted; its placement was withdrawn"},
		{"a template never placed is not found", "cm/my-app", events.PlacementDecision{},
			"no placement for cm/my-app -n default: is the template applied and claimed by a policy? (flotilla get policies)"},
		{"a core kind is named as kubectl names it, without the group explain resolves with", "configmap.core/my-app", events.PlacementDecision{},
			"no placement for configmap/my-app -n default: is the template applied and claimed by a policy? (flotilla get policies)"},
		{"a bare name is not enough", "my-app", events.PlacementDecision{}, `"my-app": want KIND/NAME, e.g. deployment/my-app`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExplainPlacement(ms, tt.ref, "default")
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(events.Binding{})); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlacementAsWatchShowsIt(t *testing.T) {
	r := &recorder{t: t}
	for _, tt := range []struct {
		name   string
		stored Stored
		want   events.PlacementDecision
		wantOK bool
	}{
		{"a decision comes without its binding", r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: myApp, Generation: 2, Binding: &events.Binding{Key: myApp}}),
			events.PlacementDecision{Key: myApp, Generation: 2}, true},
		{"a withdrawal comes with its key", r.stored(events.TypePlacementRemoved, events.PlacementDecision{Key: mySvc}), events.PlacementDecision{Key: mySvc}, true},
		{"an invalid event is skipped", Stored{Err: errInvalid}, events.PlacementDecision{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Placement(tt.stored)
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(events.Binding{})); diff != "" {
				t.Errorf("placement (-want +got):\n%s", diff)
			}
		})
	}
}
