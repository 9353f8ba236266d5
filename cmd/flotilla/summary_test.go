package main

import (
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/events"
)

// replay's SUMMARY says something for every event type of the catalogue,
// and says so when an event's data does not decode.
func TestReplaySummarizesEveryEventType(t *testing.T) {
	for _, entry := range events.Catalogue {
		t.Run(string(entry.Type), func(t *testing.T) {
			data := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "my-app", "namespace": "default"},
				"key": map[string]any{"kind": "Deployment", "namespace": "default", "name": "my-app"}, "cluster": "cluster1", "name": "cluster1",
				"phase": "Running", "state": "Ready", "consumer": "policyd-input", "reason": "bad", "keyId": "k1", "clusters": []any{}}
			e, err := events.New(entry.Type, "/test", "x", data)
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(e); got == "" || got == "unknown event type" || strings.HasPrefix(got, "data does not decode") {
				t.Errorf("summary %q", got)
			}
			bad, err := events.New(entry.Type, "/test", "x", "not an object")
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(bad); !strings.HasPrefix(got, "data does not decode") {
				t.Errorf("summary of undecodable data %q", got)
			}
		})
	}
}
