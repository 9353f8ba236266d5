package main

import (
	"bytes"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
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
	fleet readmodel.Fleet
}

func recordedViews(t *testing.T) views {
	t.Helper()
	v := views{decisions: readmodel.Decisions(recordedOn(t, events.AllPlacements))}
	v.work = readmodel.Join(recordedOn(t, events.AllWork), v.decisions, recordedOn(t, events.AllHealth))
	v.published = readmodel.FoldPublished(recordedOn(t, readmodel.PublishedSubjects...))
	v.clusters = readmodel.Clusters(recordedOn(t, events.AllMembers), recordedOn(t, events.AllHealth, events.AllCapacity))
	v.fleet = readmodel.Fleet{Published: v.published, Decisions: v.decisions, Work: v.work, Clusters: v.clusters}
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

// getPrinted runs `flotilla get ARGS` over v's fleet, printing into b.
func getPrinted(b *bytes.Buffer, v views, args ...string) error {
	c := newGet(&globals{})
	c.SetArgs(args)
	c.SetOut(b)
	c.SetErr(b)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		l := &listFlags{}
		l.namespace, _ = cmd.Flags().GetString("namespace")
		l.all, _ = cmd.Flags().GetBool("all-namespaces")
		l.namespaceOnly = cmd.Flags().Changed("namespace")
		l.selector, _ = cmd.Flags().GetString("selector")
		l.output, _ = cmd.Flags().GetString("output")
		l.noHeaders, _ = cmd.Flags().GetBool("no-headers")
		l.showLabels, _ = cmd.Flags().GetBool("show-labels")
		if err := l.check(); err != nil {
			return err
		}
		sel, err := labels.Parse(l.selector)
		if err != nil {
			return err
		}
		targets, err := readmodel.ParseArgs(args, readmodel.Known(v.fleet.Published), false)
		if err != nil {
			return err
		}
		return printGet(cmd.Context(), b, b, nil, v.fleet, targets, l, sel)
	}
	c.SilenceErrors, c.SilenceUsage = true, true
	return c.Execute()
}
