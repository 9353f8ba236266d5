package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/executord"
	"github.com/flotilla-io/flotilla/healthd"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/schedulerd"
)

// matches reports whether the NATS subject pattern p matches subject s.
func matches(p, s string) bool {
	pt, st := strings.Split(p, "."), strings.Split(s, ".")
	for i, t := range pt {
		if t == ">" {
			return len(st) > i
		}
		if i >= len(st) || (t != "*" && t != st[i]) {
			return false
		}
	}
	return len(pt) == len(st)
}

func allowed(patterns []string, subject string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, subject) })
}

// sampleSubject is one concrete subject of a catalogue row.
func sampleSubject(row string) string {
	return strings.NewReplacer("<key>", "default.apps.Deployment.web", "<cluster>", "cluster1", "<consumer>", "some-consumer").Replace(row)
}

func grantOf(t *testing.T, req natsbus.IssueRequest) natsbus.Permissions {
	t.Helper()
	g, err := roleGrant(req)
	if err != nil {
		t.Fatal(err)
	}
	return g.Permissions(natsbus.InboxPrefix("UTEST"))
}

// TestEachDaemonPublishesExactlyTheCatalogueRowsItProduces holds every
// daemon's credentials to the event catalogue: it may publish a subject of
// every row whose producer names it, and of no other row; so adding an
// event type cannot silently widen or break a daemon's permissions.
func TestEachDaemonPublishesExactlyTheCatalogueRowsItProduces(t *testing.T) {
	for _, d := range []string{"policyd", "schedulerd", "healthd", "executord"} {
		p := grantOf(t, natsbus.IssueRequest{Role: d})
		for _, e := range events.Catalogue {
			if e.Stream == events.StreamDeadLetter {
				continue // dead letters: by consumer name, below
			}
			subject := sampleSubject(e.Subject)
			if want, got := producedBy(e, d), allowed(p.Publish, subject); want != got {
				t.Errorf("%s may publish %s (%s) = %v, want %v (catalogue producer %q)", d, subject, e.Type, got, want, e.Producer)
			}
		}
	}
}

// TestEachDaemonsDeclaredProducesAreItsCatalogueRows: what a daemon
// package says it publishes is what the catalogue says it produces (the
// doc.go tables check one direction, this the other).
func TestEachDaemonsDeclaredProducesAreItsCatalogueRows(t *testing.T) {
	for d, declared := range map[string][]events.Type{"policyd": policyd.Produces, "schedulerd": schedulerd.Produces, "healthd": healthd.Produces, "executord": executord.Produces} {
		var want []events.Type
		for _, e := range events.Catalogue {
			if producedBy(e, d) {
				want = append(want, e.Type)
			}
		}
		got := slices.Clone(declared)
		slices.Sort(want)
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s Produces vs catalogue (-want +got):\n%s", d, diff)
		}
	}
}

// TestEachDaemonBindsAcknowledgesAndDeadLettersOnlyForItsOwnConsumers.
func TestEachDaemonBindsAcknowledgesAndDeadLettersOnlyForItsOwnConsumers(t *testing.T) {
	own := map[string][]natsbus.ConsumerSpec{
		"policyd":    policyd.Consumers(policyd.DefaultConfig()),
		"schedulerd": schedulerd.Consumers(schedulerd.DefaultConfig()),
		"healthd":    healthd.Consumers(healthd.DefaultConfig()),
	}
	for d, consumers := range own {
		p := grantOf(t, natsbus.IssueRequest{Role: d})
		for other, theirs := range own {
			for _, c := range theirs {
				ack := "$JS.ACK." + c.Stream + "." + c.Name + ".1.1.1.1.1"
				if want, got := other == d, allowed(p.Publish, ack); want != got {
					t.Errorf("%s may acknowledge %s's %s = %v, want %v", d, other, c.Name, got, want)
				}
				if want, got := other == d, allowed(p.Publish, events.DeadLetterSubject(c.Name)); want != got {
					t.Errorf("%s may dead-letter for %s = %v, want %v", d, c.Name, got, want)
				}
			}
		}
		for _, c := range consumers {
			if !allowed(p.Publish, "$JS.API.CONSUMER.MSG.NEXT."+c.Stream+"."+c.Name) {
				t.Errorf("%s may not pull from its own %s", d, c.Name)
			}
		}
	}
}

// TestExecutordForOneClusterPublishesOnlyThatClustersWork: --cluster
// narrows executord to one member's work and placement consumer.
func TestExecutordForOneClusterPublishesOnlyThatClustersWork(t *testing.T) {
	p := grantOf(t, natsbus.IssueRequest{Role: "executord", Cluster: "cluster1"})
	key := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}
	for subject, want := range map[string]bool{
		events.WorkSubject("cluster1", key): true,
		events.WorkSubject("cluster2", key): false,
		"$JS.ACK." + events.StreamPlacement + "." + executord.ConsumerFor("cluster1") + ".1.1.1.1.1": true,
		"$JS.ACK." + events.StreamPlacement + "." + executord.ConsumerFor("cluster2") + ".1.1.1.1.1": false,
	} {
		if got := allowed(p.Publish, subject); got != want {
			t.Errorf("may publish %s = %v, want %v", subject, got, want)
		}
	}
}

func TestUsersRolesAllowWhatTheySayAndNothingElse(t *testing.T) {
	key := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: "web"}
	other := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "team-b", Name: "web"}
	cases := []struct {
		name    string
		req     natsbus.IssueRequest
		subject string
		want    bool
	}{
		{"a publisher publishes input", natsbus.IssueRequest{Role: rolePublisher}, events.InputSubject(key), true},
		{"a publisher writes no placement", natsbus.IssueRequest{Role: rolePublisher}, events.PlacementSubject(key), false},
		{"a publisher writes no binding", natsbus.IssueRequest{Role: rolePublisher}, events.BindingSubject(key), false},
		{"a publisher reads no stream", natsbus.IssueRequest{Role: rolePublisher}, "$JS.API.CONSUMER.CREATE.FLOTILLA_PLACEMENT.x", false},
		{"a publisher reaches no credentials service", natsbus.IssueRequest{Role: rolePublisher}, natsbus.IssueSubject, false},
		{"a namespace's publisher publishes its namespace", natsbus.IssueRequest{Role: rolePublisher, Namespace: "team-a"}, events.InputSubject(key), true},
		{"a namespace's publisher publishes no other", natsbus.IssueRequest{Role: rolePublisher, Namespace: "team-a"}, events.InputSubject(other), false},
		{"a viewer reads placements", natsbus.IssueRequest{Role: roleViewer}, "$JS.API.CONSUMER.CREATE.FLOTILLA_PLACEMENT.x", true},
		{"a viewer publishes no input", natsbus.IssueRequest{Role: roleViewer}, events.InputSubject(key), false},
		{"a viewer deletes no consumer", natsbus.IssueRequest{Role: roleViewer}, "$JS.API.CONSUMER.DELETE.FLOTILLA_INPUT.policyd-input", false},
		{"a viewer deletes no stream", natsbus.IssueRequest{Role: roleViewer}, "$JS.API.STREAM.DELETE.FLOTILLA_INPUT", false},
		{"a viewer reads no credentials bucket", natsbus.IssueRequest{Role: roleViewer}, "$JS.API.CONSUMER.CREATE.KV_FLOTILLA_CREDENTIALS.x", false},
		{"the console reads work", natsbus.IssueRequest{Role: roleConsole}, "$JS.API.CONSUMER.CREATE.FLOTILLA_WORK.x", true},
		{"the console reads dead letters", natsbus.IssueRequest{Role: roleConsole}, "$JS.API.CONSUMER.CREATE.FLOTILLA_DEADLETTER.x", true},
		{"the console reads no raw input", natsbus.IssueRequest{Role: roleConsole}, "$JS.API.CONSUMER.CREATE.FLOTILLA_INPUT.x", false},
		{"the console publishes no input", natsbus.IssueRequest{Role: roleConsole}, events.InputSubject(key), false},
		{"the console writes no placement", natsbus.IssueRequest{Role: roleConsole}, events.PlacementSubject(key), false},
		{"the console deletes no consumer", natsbus.IssueRequest{Role: roleConsole}, "$JS.API.CONSUMER.DELETE.FLOTILLA_WORK.x", false},
		{"a daemon deletes no stream", natsbus.IssueRequest{Role: "schedulerd"}, "$JS.API.STREAM.DELETE.FLOTILLA_PLACEMENT", false},
		{"an admin issues credentials", natsbus.IssueRequest{Role: roleAdmin}, natsbus.IssueSubject, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := grantOf(t, c.req)
			if got := allowed(p.Publish, c.subject); got != c.want {
				t.Errorf("may publish %s = %v, want %v", c.subject, got, c.want)
			}
		})
	}
}

func TestEveryRoleButAdminSubscribesOnlyToItsOwnInbox(t *testing.T) {
	for _, role := range roleNames() {
		if role == roleAdmin {
			continue
		}
		p := grantOf(t, natsbus.IssueRequest{Role: role})
		if diff := cmp.Diff([]string{natsbus.InboxPrefix("UTEST") + ".>"}, p.Subscribe); diff != "" {
			t.Errorf("%s subscribes (-want +got):\n%s", role, diff)
		}
	}
}

func TestARequestTheRoleCannotNarrowIsRefused(t *testing.T) {
	for _, req := range []natsbus.IssueRequest{
		{Role: "nobody"},
		{Role: roleViewer, Cluster: "cluster1"},
		{Role: "executord", Namespace: "team-a"},
	} {
		if _, err := roleGrant(req); err == nil {
			t.Errorf("roleGrant(%+v) = nil error, want a refusal", req)
		}
	}
}
