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

// mayPublish is what the server decides: allowed and not denied.
func mayPublish(p natsbus.Permissions, subject string) bool {
	return allowed(p.Publish, subject) && !allowed(p.PublishDeny, subject)
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
	return g.Permissions("UTEST")
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

// TestExecutordForOneClusterReadsAndPublishesOnlyThatClustersWork:
// --cluster holds executord to one member: its work status to publish, its
// assignments and statuses to read through its own consumers, and nothing
// that reads a stream whole.
func TestExecutordForOneClusterReadsAndPublishesOnlyThatClustersWork(t *testing.T) {
	p := grantOf(t, natsbus.IssueRequest{Role: "executord", Cluster: "cluster1"})
	key := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}
	const api = "$JS.API."
	work, own, reader := events.StreamWork, executord.ConsumerFor("cluster1"), executord.ReaderFor("cluster1")
	for _, c := range []struct {
		name    string
		subject string
		want    bool
	}{
		{"it publishes its cluster's work status", events.WorkSubject("cluster1", key), true},
		{"it publishes no other cluster's work status", events.WorkSubject("cluster2", key), false},
		{"it publishes no assignment", events.AssignmentSubject("cluster1", key), false},
		{"it announces no seal key", events.SealKeySubject, false},
		{"it creates its consumer on its assignments", api + "CONSUMER.CREATE." + work + "." + own + "." + events.AssignmentsOf("cluster1"), true},
		{"it creates its consumer on no other cluster's", api + "CONSUMER.CREATE." + work + "." + own + "." + events.AssignmentsOf("cluster2"), false},
		{"it creates its consumer on no wider filter", api + "CONSUMER.CREATE." + work + "." + own + ".flotilla.>", false},
		{"it creates its consumer with no filter in the subject", api + "CONSUMER.CREATE." + work + "." + own, false},
		{"it reads its statuses through its reader", api + "CONSUMER.CREATE." + work + "." + reader + "." + events.WorkOf("cluster1"), true},
		{"it reads one assignment through its reader", api + "CONSUMER.CREATE." + work + "." + reader + "." + events.AssignmentSubject("cluster1", key), true},
		{"it reads no other cluster's assignment", api + "CONSUMER.CREATE." + work + "." + reader + "." + events.AssignmentSubject("cluster2", key), false},
		{"it creates no consumer of another name", api + "CONSUMER.CREATE." + work + ".other." + events.AssignmentsOf("cluster1"), false},
		{"it pulls from its consumer", api + "CONSUMER.MSG.NEXT." + work + "." + own, true},
		{"it pulls from no other cluster's consumer", api + "CONSUMER.MSG.NEXT." + work + "." + executord.ConsumerFor("cluster2"), false},
		{"it acknowledges its consumer", "$JS.ACK." + work + "." + own + ".1.1.1.1.1", true},
		{"it gets no message by sequence", api + "STREAM.MSG.GET." + work, false},
		{"it gets no message directly", api + "DIRECT.GET." + work + "." + events.AssignmentSubject("cluster2", key), false},
		{"it reads no stream's info", api + "STREAM.INFO." + work, false},
		{"it reads no placement", api + "CONSUMER.CREATE." + events.StreamPlacement + "." + reader + "." + events.AllPlacements, false},
		{"it gets no placement directly", api + "DIRECT.GET." + events.StreamPlacement + "." + events.PlacementSubject(key), false},
		{"it reads no binding", api + "CONSUMER.CREATE." + events.StreamPolicy + "." + reader + "." + events.BindingSubject(key), false},
		{"it reads its own dead letters", api + "CONSUMER.CREATE." + events.StreamDeadLetter + "." + reader + "." + events.DeadLetterSubject(own), true},
		{"it reads no other dead letters", api + "CONSUMER.CREATE." + events.StreamDeadLetter + "." + reader + "." + events.AllDeadLetter, false},
		{"it creates no stream", api + "STREAM.CREATE." + work, false},
		{"it updates no stream", api + "STREAM.UPDATE." + events.StreamPlacement, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := allowed(p.Publish, c.subject); got != c.want {
				t.Errorf("may publish to %s = %v, want %v", c.subject, got, c.want)
			}
		})
	}
}

func TestUsersRolesAllowWhatTheySayAndNothingElse(t *testing.T) {
	const api = "$JS.API."
	reader := natsbus.ReaderNames("UTEST")[0]
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
		{"a viewer reads placements through its own consumer", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.CREATE.FLOTILLA_PLACEMENT." + reader + ".flotilla.placement.>", true},
		{"a viewer pulls from its own consumer", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.MSG.NEXT.FLOTILLA_PLACEMENT." + reader, true},
		{"a viewer deletes its own consumer", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.DELETE.FLOTILLA_PLACEMENT." + reader, true},
		{"a viewer gets a message by sequence", natsbus.IssueRequest{Role: roleViewer}, api + "STREAM.MSG.GET.FLOTILLA_PLACEMENT", true},
		{"a viewer creates no consumer of another name", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.CREATE.FLOTILLA_PLACEMENT.x", false},
		{"a viewer creates no consumer named in the request only", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.CREATE.FLOTILLA_INPUT", false},
		{"a viewer creates no durable the legacy way", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.DURABLE.CREATE.FLOTILLA_INPUT." + policyd.ConsumerName, false},
		{"a viewer re-filters no daemon's consumer", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.CREATE.FLOTILLA_INPUT." + policyd.ConsumerName + ".flotilla.>", false},
		{"a viewer updates no daemon's consumer", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.CREATE.FLOTILLA_INPUT." + policyd.ConsumerName, false},
		{"a viewer pulls from no daemon's consumer", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.MSG.NEXT.FLOTILLA_INPUT." + policyd.ConsumerName, false},
		{"a viewer acknowledges for no daemon's consumer", natsbus.IssueRequest{Role: roleViewer}, "$JS.ACK.FLOTILLA_INPUT." + policyd.ConsumerName + ".1.1.1.1.1", false},
		{"a viewer reads through no other credential's consumer", natsbus.IssueRequest{Role: roleViewer}, api + "CONSUMER.MSG.NEXT.FLOTILLA_PLACEMENT." + natsbus.ReaderNames("UOTHERUSERKEY")[0], false},
		{"a viewer publishes no input", natsbus.IssueRequest{Role: roleViewer}, events.InputSubject(key), false},
		{"a viewer deletes no consumer", natsbus.IssueRequest{Role: roleViewer}, "$JS.API.CONSUMER.DELETE.FLOTILLA_INPUT.policyd-input", false},
		{"a viewer deletes no stream", natsbus.IssueRequest{Role: roleViewer}, "$JS.API.STREAM.DELETE.FLOTILLA_INPUT", false},
		{"a viewer reads no credentials bucket", natsbus.IssueRequest{Role: roleViewer}, "$JS.API.CONSUMER.CREATE.KV_FLOTILLA_CREDENTIALS.x", false},
		{"the console reads work", natsbus.IssueRequest{Role: roleConsole}, api + "CONSUMER.CREATE.FLOTILLA_WORK." + reader, true},
		{"the console reads dead letters", natsbus.IssueRequest{Role: roleConsole}, api + "CONSUMER.CREATE.FLOTILLA_DEADLETTER." + reader + ".flotilla.deadletter.>", true},
		{"the console reads no raw input", natsbus.IssueRequest{Role: roleConsole}, api + "CONSUMER.CREATE.FLOTILLA_INPUT." + reader, false},
		{"the console publishes no input", natsbus.IssueRequest{Role: roleConsole}, events.InputSubject(key), false},
		{"the console writes no placement", natsbus.IssueRequest{Role: roleConsole}, events.PlacementSubject(key), false},
		{"the console deletes no consumer", natsbus.IssueRequest{Role: roleConsole}, "$JS.API.CONSUMER.DELETE.FLOTILLA_WORK.x", false},
		{"a daemon deletes no stream", natsbus.IssueRequest{Role: "schedulerd"}, "$JS.API.STREAM.DELETE.FLOTILLA_PLACEMENT", false},
		{"schedulerd writes the capacity ledger", natsbus.IssueRequest{Role: "schedulerd"}, "$KV." + natsbus.LedgerBucket + ".cluster1", true},
		{"schedulerd follows the capacity ledger through its own consumer", natsbus.IssueRequest{Role: "schedulerd"}, api + "CONSUMER.CREATE." + natsbus.LedgerStream + "." + reader + ".$KV." + natsbus.LedgerBucket + ".>", true},
		{"policyd writes no capacity ledger", natsbus.IssueRequest{Role: "policyd"}, "$KV." + natsbus.LedgerBucket + ".cluster1", false},
		{"healthd writes no capacity ledger", natsbus.IssueRequest{Role: "healthd"}, "$KV." + natsbus.LedgerBucket + ".cluster1", false},
		{"executord writes no capacity ledger", natsbus.IssueRequest{Role: "executord"}, "$KV." + natsbus.LedgerBucket + ".cluster1", false},
		{"a pull-mode executord writes no capacity ledger", natsbus.IssueRequest{Role: "executord", Cluster: "cluster1"}, "$KV." + natsbus.LedgerBucket + ".cluster1", false},
		{"a viewer writes no capacity ledger", natsbus.IssueRequest{Role: roleViewer}, "$KV." + natsbus.LedgerBucket + ".cluster1", false},
		{"hubd writes no capacity ledger", natsbus.IssueRequest{Role: "hubd"}, "$KV." + natsbus.LedgerBucket + ".cluster1", false},
		{"an admin issues credentials", natsbus.IssueRequest{Role: roleAdmin}, natsbus.IssueSubject, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := grantOf(t, c.req)
			if got := mayPublish(p, c.subject); got != c.want {
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

// TestNoReaderNorOtherDaemonReachesADaemonsDurableConsumer: a durable
// consumer of a daemon is bound, updated, pulled from, acknowledged for
// and deleted by no other credential (the admin's aside), the push-mode
// executord's, which binds consumers of any name on two streams, included.
func TestNoReaderNorOtherDaemonReachesADaemonsDurableConsumer(t *testing.T) {
	for owner := range daemons {
		for _, c := range daemonConsumers(owner) {
			if c.Name == "*" {
				continue
			}
			for _, role := range roleNames() {
				if role == roleAdmin || role == owner {
					continue
				}
				p := grantOf(t, natsbus.IssueRequest{Role: role})
				for _, subject := range []string{
					"$JS.API.CONSUMER.CREATE." + c.Stream + "." + c.Name,
					"$JS.API.CONSUMER.CREATE." + c.Stream + "." + c.Name + ".flotilla.>",
					"$JS.API.CONSUMER.MSG.NEXT." + c.Stream + "." + c.Name,
					"$JS.API.CONSUMER.DELETE." + c.Stream + "." + c.Name,
					"$JS.ACK." + c.Stream + "." + c.Name + ".1.1.1.1.1",
				} {
					if mayPublish(p, subject) {
						t.Errorf("%s may publish %s, which is %s's", role, subject, owner)
					}
				}
			}
		}
	}
}

// TestAnExecutordOfEveryClusterBindsItsOwnConsumersOfAnyName: the push-mode
// executord names its consumers after clusters and instances not known
// when it is issued; it may bind, pull from and acknowledge for those.
func TestAnExecutordOfEveryClusterBindsItsOwnConsumersOfAnyName(t *testing.T) {
	cfg := executord.DefaultConfig()
	cfg.Instance = "a1"
	p := grantOf(t, natsbus.IssueRequest{Role: "executord"})
	for _, c := range executord.Consumers(cfg, "cluster9") {
		for _, subject := range []string{
			"$JS.API.CONSUMER.CREATE." + c.Stream + "." + c.Name + "." + c.Subjects[0],
			"$JS.API.CONSUMER.MSG.NEXT." + c.Stream + "." + c.Name,
			"$JS.ACK." + c.Stream + "." + c.Name + ".1.1.1.1.1",
		} {
			if !mayPublish(p, subject) {
				t.Errorf("executord may not publish %s", subject)
			}
		}
	}
}
