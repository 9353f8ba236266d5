package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/readmodel"
)

// fixClock stands the clock three days after recordedAt for one test.
func fixClock(t *testing.T) {
	t.Helper()
	old := now
	now = func() time.Time { return recordedAt.Add(72 * time.Hour) }
	t.Cleanup(func() { now = old })
}

// views are the read model's views of the recorded events.
type views struct {
	decisions []events.PlacementDecision
	work      readmodel.Work
	published readmodel.Published
	clusters  []readmodel.Cluster
	// myApp is deployment/my-app, as `get KIND/NAME` and `describe work` find it.
	myApp readmodel.Template
}

func recordedViews(t *testing.T) views {
	t.Helper()
	v := views{decisions: readmodel.Decisions(recordedOn(t, events.AllPlacements))}
	v.work = readmodel.Join(recordedOn(t, events.AllWork), v.decisions, recordedOn(t, events.AllHealth))
	v.published = readmodel.FoldPublished(recordedOn(t, readmodel.PublishedSubjects...))
	v.clusters = readmodel.Clusters(recordedOn(t, events.AllMembers), recordedOn(t, events.AllHealth, events.AllCapacity))
	var err error
	if v.myApp, err = readmodel.FindTemplate(v.decisions, v.work, "deploy/my-app", "default"); err != nil {
		t.Fatal(err)
	}
	return v
}

// printed runs print into a buffer.
func printed(t *testing.T, print func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := print(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
