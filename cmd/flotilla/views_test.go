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

// recordedWork joins the recorded work as `get work` and `describe work`
// read it.
func recordedWork(t *testing.T) ([]events.PlacementDecision, readmodel.Work) {
	decisions := readmodel.Decisions(recordedOn(t, events.AllPlacements))
	return decisions, readmodel.Join(recordedOn(t, events.AllWork), decisions, recordedOn(t, events.AllHealth))
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
