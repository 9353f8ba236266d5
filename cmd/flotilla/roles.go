package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/executord"
	"github.com/flotilla-io/flotilla/healthd"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/schedulerd"
)

// Roles a credential can have (docs/security.md says what each allows).
const (
	roleAdmin     = "admin"
	roleViewer    = "viewer"
	rolePublisher = "publisher"
	roleConsole   = "console"
)

// roleNames lists every role, daemons' included, for help and errors.
func roleNames() []string {
	out := []string{roleAdmin, roleViewer, rolePublisher, roleConsole}
	for name := range daemons {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// anyName stands for a name a grant cannot know in advance (a member
// cluster, an instance) while its subjects are derived.
const anyName = "\x00any"

// roleGrant is what a credential requested as req may do. A daemon's grant
// is derived from the event catalogue and the daemon's own consumers: it
// publishes exactly the subjects of the event types the catalogue says it
// produces, reads the streams it consumes and the streams it writes (its
// state is rebuilt from them), and binds only its own durable consumers.
func roleGrant(req natsbus.IssueRequest) (natsbus.Grant, error) {
	if req.Cluster != "" && req.Role != "executord" {
		return natsbus.Grant{}, fmt.Errorf("--cluster narrows only the executord role")
	}
	if req.Namespace != "" && req.Role != rolePublisher {
		return natsbus.Grant{}, fmt.Errorf("--namespace narrows only the publisher role")
	}
	switch req.Role {
	case roleAdmin:
		return natsbus.Grant{All: true}, nil
	case roleViewer:
		g := natsbus.Grant{}
		for _, s := range events.Streams {
			g.Read = append(g.Read, s.Name)
		}
		for _, b := range natsbus.CoordinationBuckets {
			g.Read = append(g.Read, "KV_"+b) // flotilla get instances
		}
		return g, nil
	case roleConsole:
		// What the web console reads and follows (consoleStreams); it
		// publishes nothing.
		return natsbus.Grant{Read: slices.Clone(consoleStreams)}, nil
	case rolePublisher:
		ns := "*"
		if req.Namespace != "" {
			ns = events.ClusterToken(req.Namespace) // a namespace is one subject token, escaped like a cluster name
		}
		return natsbus.Grant{Publish: []string{"flotilla.input." + ns + ".*.*.*"}}, nil
	case "hubd":
		// The CLI's apply and delete driven by a watch (docs/hub.md): it
		// publishes what a publisher publishes and reads what a viewer reads.
		g := natsbus.Grant{Publish: []string{"flotilla.input.*.*.*.*"}}
		for _, s := range events.Streams {
			g.Read = append(g.Read, s.Name)
		}
		return g, nil
	case "policyd", "schedulerd", "healthd", "executord":
		if req.Role == "executord" && req.Cluster != "" {
			return memberGrant(req.Cluster), nil
		}
		return daemonGrant(req.Role), nil
	}
	return natsbus.Grant{}, fmt.Errorf("no role %q: the roles are %s", req.Role, strings.Join(roleNames(), ", "))
}

// daemonConsumers are the durable consumers daemon binds, each by the name
// it binds it with, or "*" where that name is not known in advance (it
// holds a member cluster's or an instance's name): the one place a role's
// consumer names come from, for its own grant and for what the others'
// grants deny (DESIGN.md decision 26).
func daemonConsumers(daemon string) []natsbus.ConsumerSpec {
	var out []natsbus.ConsumerSpec
	switch daemon {
	case "policyd":
		out = policyd.EveryConsumer() // every instance slot's
	case "schedulerd":
		out = schedulerd.EveryConsumer() // every instance slot's

	case "healthd":
		out = healthd.EveryConsumer() // every instance slot's
	case "executord":
		cfg := executord.DefaultConfig()
		cfg.Instance = anyName
		out = executord.EveryConsumer(cfg, anyName) // every instance slot's
	}
	for i, c := range out {
		if strings.Contains(c.Name, events.ClusterToken(anyName)) || strings.Contains(c.Name, anyName) {
			out[i].Name = "*"
		}
	}
	return out
}

// daemonGrant derives a daemon's grant from the catalogue rows it produces
// and its consumers. Where it binds consumers of any name of a stream
// ("*"), the other daemons' consumers of that stream are denied it by
// name: it can neither bind, pull from nor acknowledge for them.
func daemonGrant(daemon string) natsbus.Grant {
	g := natsbus.Grant{EnsureStreams: true, Consume: daemonConsumers(daemon), Buckets: slices.Clone(natsbus.CoordinationBuckets)}
	if daemon == "schedulerd" {
		// The capacity ledger its instances share (DESIGN.md decision 28):
		// written and followed by schedulerd alone.
		g.Buckets = append(g.Buckets, natsbus.LedgerBucket)
		g.Read = append(g.Read, natsbus.LedgerStream)
	}
	for _, e := range events.Catalogue {
		if !producedBy(e, daemon) {
			continue
		}
		g.Publish = append(g.Publish, subjectPattern(e.Subject, ""))
		g.Read = append(g.Read, e.Stream)
	}
	for other := range daemons {
		if other == daemon {
			continue
		}
		for _, c := range daemonConsumers(other) {
			if c.Name != "*" {
				g.Foreign = append(g.Foreign, c)
			}
		}
	}
	slices.SortFunc(g.Foreign, func(a, b natsbus.ConsumerSpec) int { return strings.Compare(a.Stream+"."+a.Name, b.Stream+"."+b.Name) })
	slices.Sort(g.Publish)
	slices.Sort(g.Read)
	g.Publish, g.Read = slices.Compact(g.Publish), slices.Compact(g.Read)
	return g
}

// memberGrant is what an executord serving only cluster (pull mode, run in
// or beside the member) may do: publish that cluster's rows of the
// catalogue rows executord produces (its work status; not the seal key,
// which pull mode never announces), and read only that cluster's
// assignments, its own work status and its own dead letters, through its
// durable consumer and its one reader (natsbus.Grant.Scoped). It creates
// no stream and reads no placement, binding or template of any cluster:
// what it applies reaches it narrowed to its cluster (events.AssignmentOf).
func memberGrant(cluster string) natsbus.Grant {
	cfg := executord.DefaultConfig()
	cfg.Instance, cfg.Cluster = anyName, cluster
	consumer := executord.ConsumerFor(cluster)
	g := natsbus.Grant{Consume: executord.Consumers(cfg, cluster), Reader: executord.ReaderFor(cluster),
		Scoped: []natsbus.ScopedRead{
			{Stream: events.StreamWork, Filter: events.AssignmentsOf(cluster)},
			{Stream: events.StreamWork, Filter: events.WorkOf(cluster)},
			{Stream: events.StreamDeadLetter, Filter: events.DeadLetterSubject(consumer)},
		}}
	for _, e := range events.Catalogue {
		if producedBy(e, "executord") && strings.Contains(e.Subject, "<cluster>") {
			g.Publish = append(g.Publish, subjectPattern(e.Subject, cluster))
		}
	}
	return g
}

// producedBy reads the catalogue's Producer column ("healthd, executord").
func producedBy(e events.Entry, daemon string) bool {
	for _, p := range strings.Split(e.Producer, ",") {
		if strings.TrimSpace(p) == daemon {
			return true
		}
	}
	return false
}

// subjectPattern turns a catalogue subject into the NATS pattern that
// matches every subject of its rows: an object key is four tokens, a
// cluster one (the given cluster's when not "").
func subjectPattern(subject, cluster string) string {
	c := "*"
	if cluster != "" {
		c = events.ClusterToken(cluster)
	}
	return strings.NewReplacer("<key>", "*.*.*.*", "<cluster>", c, "<consumer>", "*").Replace(subject)
}
