package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// deadLettered stores the dead letter a consumer writes when it meets
// garbage on my-app's placement subject at sequence 7.
func deadLettered(t *testing.T, bus *natsbus.Bus) {
	t.Helper()
	e, err := events.New(events.TypeEventDeadLettered, "/natsbus/executord-cluster1", events.PlacementSubject(appKey), events.DeadLetter{
		Consumer: "executord-cluster1", Reason: `not a CloudEvent 1.0: ce-specversion is ""`, Stream: events.StreamPlacement, Sequence: 7,
		Subject: events.PlacementSubject(appKey), Deliveries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(context.Background(), events.DeadLetterSubject("executord-cluster1"), e); err != nil {
		t.Fatal(err)
	}
}

func TestGetDeadLetters(t *testing.T) {
	for _, tt := range []struct {
		name               string
		stored             bool
		args               []string
		wantOut, wantError string
	}{
		{"lists the consumer, subject, reason and age", true, nil,
			"NAME          CONSUMER             SUBJECT                                             REASON                                       AGE\n" +
				"placement-7   executord-cluster1   flotilla.placement.default.apps.Deployment.my-app   not a CloudEvent 1.0: ce-specversion is \"\"   0s\n", ""},
		{"-o wide adds where it came from", true, []string{"-o", "wide"},
			"NAME          CONSUMER             SUBJECT                                             REASON                                       AGE   STREAM               SEQUENCE   DELIVERIES\n" +
				"placement-7   executord-cluster1   flotilla.placement.default.apps.Deployment.my-app   not a CloudEvent 1.0: ce-specversion is \"\"   0s    FLOTILLA_PLACEMENT   7          1\n", ""},
		{"none says so as kubectl does", false, nil, "", "No resources found\n"},
		{"none in JSON is an empty list", false, []string{"-o", "json"}, "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, bus := eventstest.Server(t)
			if tt.stored {
				deadLettered(t, bus)
			}
			out, errw, err := runCLI(t, url, append([]string{"get", "deadletters"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantOut, out); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantError, errw); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetDeadLettersInJSONKeepsTheWholeDeadLetter(t *testing.T) {
	url, bus := eventstest.Server(t)
	deadLettered(t, bus)
	out, _, err := runCLI(t, url, "get", "deadletters", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Items []struct {
			Metadata map[string]any `json:"metadata"`
			Spec     map[string]any `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	if len(got.Items) != 1 || got.Items[0].Spec["consumer"] != "executord-cluster1" || got.Items[0].Spec["stream"] != events.StreamPlacement ||
		got.Items[0].Spec["sequence"] != float64(7) || got.Items[0].Metadata["creationTimestamp"] == nil {
		t.Errorf("-o json:\n%s", out)
	}
}

func TestReplaySummarizesADeadLetterWithItsReason(t *testing.T) {
	url, bus := eventstest.Server(t)
	deadLettered(t, bus)
	out, _, err := runCLI(t, url, "replay", "--stream", events.StreamDeadLetter, "--from-seq", "1")
	if err != nil {
		t.Fatal(err)
	}
	// The last column is SUMMARY, after the dead letter's type and subject.
	want := []string{string(events.TypeEventDeadLettered) + " " + events.DeadLetterSubject("executord-cluster1") + " " +
		`executord-cluster1 gave up on FLOTILLA_PLACEMENT 7 (flotilla.placement.default.apps.Deployment.my-app): not a CloudEvent 1.0: ce-specversion is ""`}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		fields := strings.Fields(line)
		got = append(got, strings.Join(fields[3:], " ")) // after TIME, STREAM, SEQ
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replay's TYPE, SUBJECT and SUMMARY (-want +got):\n%s", diff)
	}
}
