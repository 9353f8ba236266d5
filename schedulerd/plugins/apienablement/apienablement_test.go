package apienablement

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
)

func TestFilter(t *testing.T) {
	apps := []policy.APIEnablement{{GroupVersion: "apps/v1", Resources: []policy.APIResource{{Name: "deployments", Kind: "Deployment"}}}}
	batch := []policy.APIEnablement{{GroupVersion: "batch/v1", Resources: []policy.APIResource{{Name: "jobs", Kind: "Job"}}}}
	tests := []struct {
		name     string
		apis     []policy.APIEnablement
		complete bool
		previous bool
		want     string // "" = passes; else a substring of the reason
	}{
		{"a listed resource passes", apps, true, false, ""},
		{"no API list reported yet counts as serving everything (Flotilla rule)", nil, false, false, ""},
		{"an unlisted resource on a complete list is not served", batch, true, false, "is not served"},
		{"an unlisted resource on an incomplete list is unknown and fails too", batch, false, false, "incomplete"},
		{"a cluster already running the binding passes", batch, true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &events.Binding{APIVersion: "apps/v1", Key: events.ObjectKey{Group: "apps", Kind: "Deployment", Name: "x"}}
			req := &framework.Request{Binding: b, Placement: &policy.Placement{}}
			if tt.previous {
				req.Previous = map[string]int32{"c": 1}
			}
			st := New().Filter(req, &framework.ClusterInfo{Name: "c", APIEnablements: tt.apis, CompleteAPIs: tt.complete})
			if tt.want == "" && !st.IsSuccess() || tt.want != "" && !strings.Contains(st.Message(), tt.want) {
				t.Errorf("want %q, got %q", tt.want, st.Message())
			}
		})
	}
}
