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
	case "policyd":
		return daemonGrant("policyd", policyd.Consumers(policyd.DefaultConfig()), ""), nil
	case "schedulerd":
		return daemonGrant("schedulerd", schedulerd.Consumers(schedulerd.DefaultConfig()), ""), nil
	case "healthd":
		return daemonGrant("healthd", healthd.Consumers(healthd.DefaultConfig()), ""), nil
	case "executord":
		cfg := executord.DefaultConfig()
		cfg.Instance, cfg.Cluster = anyName, req.Cluster
		cluster := req.Cluster
		if cluster == "" {
			cluster = anyName
		}
		return daemonGrant("executord", executord.Consumers(cfg, cluster), req.Cluster), nil
	}
	return natsbus.Grant{}, fmt.Errorf("no role %q: the roles are %s", req.Role, strings.Join(roleNames(), ", "))
}

// daemonGrant derives a daemon's grant from the catalogue rows it produces
// and its consumers; cluster ("" for every one) narrows the subjects that
// name a member cluster.
func daemonGrant(daemon string, consumers []natsbus.ConsumerSpec, cluster string) natsbus.Grant {
	g := natsbus.Grant{EnsureStreams: true}
	for _, e := range events.Catalogue {
		if !producedBy(e, daemon) {
			continue
		}
		g.Publish = append(g.Publish, subjectPattern(e.Subject, cluster))
		g.Read = append(g.Read, e.Stream)
	}
	for _, c := range consumers {
		if strings.Contains(c.Name, events.ClusterToken(anyName)) || strings.Contains(c.Name, anyName) {
			c.Name = "*"
		}
		g.Consume = append(g.Consume, c)
	}
	slices.Sort(g.Publish)
	slices.Sort(g.Read)
	g.Publish, g.Read = slices.Compact(g.Publish), slices.Compact(g.Read)
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
