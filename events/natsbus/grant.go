package natsbus

import (
	"slices"

	"github.com/flotilla-io/flotilla/events"
)

// Grant is what a credential may do, in Flotilla's terms: the event
// subjects it publishes, the streams it reads and the durable consumers it
// binds. Permissions turns it into NATS subjects, JetStream's API included.
type Grant struct {
	// All allows everything in the account (the admin role).
	All bool
	// Publish are the event subjects (patterns) the credential stores
	// events on.
	Publish []string
	// Read are the streams it reads: stream info, message get and the
	// short-lived consumers of reads, replays and watches.
	Read []string
	// Consume are the durable consumers it binds, acknowledges and
	// dead-letters for. A Name of "*" stands for any consumer of its stream
	// (a push-mode executord binds one per member cluster).
	Consume []ConsumerSpec
	// EnsureStreams allows creating and updating the catalogue's streams
	// (EnsureStreams), never deleting or purging them.
	EnsureStreams bool
	// Scoped are reads held to some subjects of a stream (a member
	// cluster's): only through the consumer named Reader, or a durable
	// consumer of Consume on that stream, and only with a filter inside
	// Filter, which the server checks against the one filter a consumer is
	// created with. Nothing that reads a stream whole is granted on it: no
	// message get, no direct get, no stream info (whose subject listing
	// names every key), no other consumer.
	Scoped []ScopedRead
	// Reader is the consumer name scoped reads use (Options.Reader).
	Reader string
	// Buckets are the KV buckets it reads and writes, creating them if
	// missing (CoordinationBuckets: instances, leases, settings).
	Buckets []string
}

// ScopedRead is the part of a stream a scoped grant reads (Grant.Scoped).
type ScopedRead struct {
	Stream string
	Filter string // a subject or pattern, e.g. flotilla.assignment.cluster1.>
}

// Permissions is a Grant as NATS subjects, for one inbox prefix.
type Permissions struct {
	Publish, PublishDeny     []string
	Subscribe, SubscribeDeny []string
}

// JetStream's API subjects a grant is made of. A consumer's name is one
// token of these subjects, which is why reads are granted per stream (the
// names of the consumers a read creates are not known in advance).
const (
	jsAPI = "$JS.API."
	jsAck = "$JS.ACK."
)

// Permissions lists the subjects the grant allows for a connection whose
// inbox prefix is inbox: it subscribes to nothing but its inbox (pull
// consumers, JetStream and request replies all arrive there), and publishes
// events, JetStream API requests and acknowledgements as the grant says.
func (g Grant) Permissions(inbox string) Permissions {
	if g.All {
		return Permissions{Publish: []string{">"}, Subscribe: []string{">"}}
	}
	var p Permissions
	p.Subscribe = []string{inbox + ".>"}
	p.Publish = append(p.Publish, g.Publish...)
	scoped := map[string]bool{}
	for _, r := range g.Scoped {
		scoped[r.Stream] = true
		p.Publish = append(p.Publish, consumerSubjects(r.Stream, g.Reader, r.Filter)...)
		p.Publish = append(p.Publish, jsAPI+"CONSUMER.DELETE."+r.Stream+"."+g.Reader)
	}
	streams := slices.Clone(g.Read)
	for _, c := range g.Consume {
		if scoped[c.Stream] {
			p.Publish = append(p.Publish, consumerSubjects(c.Stream, c.Name, c.Subjects...)...)
			continue
		}
		streams = append(streams, c.Stream)
	}
	slices.Sort(streams)
	for _, s := range slices.Compact(streams) {
		p.Publish = append(p.Publish, readSubjects(s)...)
	}
	for _, c := range g.Consume {
		deadLetters := events.DeadLetterSubject(c.Name)
		if c.Name == "*" {
			deadLetters = "flotilla.deadletter.*"
		}
		p.Publish = append(p.Publish, jsAck+c.Stream+"."+c.Name+".>", deadLetters)
	}
	if len(g.Consume) > 0 && g.Reader == "" {
		// Handling an unreadable message looks up earlier dead letters.
		p.Publish = append(p.Publish, readSubjects(events.StreamDeadLetter)...)
	}
	if len(g.Buckets) > 0 {
		// Opening a bucket asks for the account's JetStream info first.
		p.Publish = append(p.Publish, jsAPI+"INFO")
	}
	for _, b := range g.Buckets {
		p.Publish = append(p.Publish, readSubjects("KV_"+b)...)
		p.Publish = append(p.Publish, jsAPI+"STREAM.CREATE.KV_"+b, "$KV."+b+".>")
	}
	if g.EnsureStreams {
		for _, s := range events.Streams {
			p.Publish = append(p.Publish, jsAPI+"STREAM.CREATE."+s.Name, jsAPI+"STREAM.UPDATE."+s.Name, jsAPI+"STREAM.INFO."+s.Name)
		}
	}
	slices.Sort(p.Publish)
	p.Publish = slices.Compact(p.Publish)
	return p
}

// readSubjects are the JetStream API subjects of reading stream s: its
// info, message get and direct get, and creating, inspecting and pulling
// from its consumers (deleting them is left out: the short-lived ones
// expire by themselves).
func readSubjects(s string) []string {
	return []string{
		jsAPI + "STREAM.INFO." + s,
		jsAPI + "STREAM.MSG.GET." + s,
		jsAPI + "DIRECT.GET." + s,
		jsAPI + "DIRECT.GET." + s + ".>",
		jsAPI + "CONSUMER.CREATE." + s + ".*",
		jsAPI + "CONSUMER.CREATE." + s + ".*.>",
		jsAPI + "CONSUMER.INFO." + s + ".*",
		jsAPI + "CONSUMER.MSG.NEXT." + s + ".*",
	}
}

// consumerSubjects are the JetStream API subjects of creating (with one of
// filters, carried in the subject), inspecting and pulling from the one
// consumer name of stream.
func consumerSubjects(stream, name string, filters ...string) []string {
	out := []string{jsAPI + "CONSUMER.INFO." + stream + "." + name, jsAPI + "CONSUMER.MSG.NEXT." + stream + "." + name}
	for _, f := range filters {
		out = append(out, jsAPI+"CONSUMER.CREATE."+stream+"."+name+"."+f)
	}
	return out
}
