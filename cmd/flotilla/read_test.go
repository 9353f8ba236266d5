package main

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

// Garbage on a placement subject neither hides the template from get nor
// shows its work Deleting: get reads the placement before it and warns.
func TestGetReadsPastAnUnreadableLatestRowAndWarns(t *testing.T) {
	fixClock(t)
	url, bus := eventstest.Server(t)
	ctx := context.Background()
	e, err := events.New(events.TypePlacementDecided, "/test", appKey.String(), events.PlacementDecision{Key: appKey, Generation: 1, Scheduled: true,
		Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 2}}, DecidedAt: recordedAt})
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, events.PlacementSubject(appKey), e); err != nil {
		t.Fatal(err)
	}
	if err := bus.PublishRaw(ctx, events.PlacementSubject(appKey), nil, []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	warning := "Warning: flotilla.placement.default.apps.Deployment.my-app: FLOTILLA_PLACEMENT sequence 2 is unreadable " +
		`(not a CloudEvent 1.0: ce-specversion is ""); showing sequence 1, the newest readable` + "\n"
	for _, tt := range []struct {
		args    []string
		wantOut string
	}{
		{[]string{"get", "placements"}, "NAME     KIND         SCHEDULED   CLUSTERS     AGE\nmy-app   Deployment   true        cluster1:2   3d\n"},
		{[]string{"get", "work"}, "NAME     CLUSTER    STATUS    AGE   KIND\nmy-app   cluster1   Pending   3d    Deployment\n"},
	} {
		t.Run(tt.args[1], func(t *testing.T) {
			out, errw, err := runCLI(t, url, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantOut, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(warning, errw); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
