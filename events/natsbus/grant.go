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
	// dead-letters for, each by its name. A Name of "*" stands for any
	// consumer of its stream but those of Foreign (a push-mode executord
	// binds one per member cluster, named after clusters not known yet).
	Consume []ConsumerSpec
	// Foreign are other credentials' durable consumers, which a "*" of
	// Consume on their stream must not reach: refused by name.
	Foreign []ConsumerSpec
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
	// Reader is the consumer name scoped reads use (Options.Reader); the
	// other grants read through ReaderNames.
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

// Permissions is a Grant as NATS subjects, for one user key.
type Permissions struct {
	Publish, PublishDeny     []string
	Subscribe, SubscribeDeny []string
}

// JetStream's API subjects a grant is made of. A consumer's name is one
// token of these subjects, and a subject permission can only match a token
// whole: which is why every consumer a restricted credential touches has a
// name known when it is issued (ReaderNames, its Consume), and why none is
// created through the API subject without a name, whose request may name
// any consumer (DESIGN.md decision 26).
const (
	jsAPI = "$JS.API."
	jsAck = "$JS.ACK."
)

// Permissions lists the subjects the grant allows for the user whose
// public key is user: it subscribes to nothing but its inbox
// (InboxPrefix: pull consumers, JetStream and request replies all arrive
// there), reads through its own consumers (ReaderNames), binds and
// acknowledges only the durable consumers of Consume, and publishes events
// as the grant says.
func (g Grant) Permissions(user string) Permissions {
	if g.All {
		return Permissions{Publish: []string{">"}, Subscribe: []string{">"}}
	}
	var p Permissions
	p.Subscribe = []string{InboxPrefix(user) + ".>"}
	p.Publish = append(p.Publish, g.Publish...)
	readers := ReaderNames(user)
	if g.Reader != "" {
		readers = []string{g.Reader}
	}
	scoped := map[string]bool{}
	for _, r := range g.Scoped {
		scoped[r.Stream] = true
		p.Publish = append(p.Publish, consumerSubjects(r.Stream, g.Reader, r.Filter)...)
		p.Publish = append(p.Publish, jsAPI+"CONSUMER.DELETE."+r.Stream+"."+g.Reader)
	}
	streams := slices.Clone(g.Read)
	for _, c := range g.Consume {
		if !scoped[c.Stream] {
			streams = append(streams, c.Stream)
		}
		if c.Name == "*" {
			p.Publish = append(p.Publish, anyConsumerSubjects(c.Stream)...)
			for _, f := range g.Foreign {
				if f.Stream == c.Stream {
					p.PublishDeny = append(p.PublishDeny, ownSubjects(f.Stream, f.Name)...)
				}
			}
			continue
		}
		p.Publish = append(p.Publish, consumerSubjects(c.Stream, c.Name, c.Subjects...)...)
	}
	if len(g.Consume) > 0 && g.Reader == "" {
		// Handling an unreadable message looks up earlier dead letters.
		streams = append(streams, events.StreamDeadLetter)
	}
	slices.Sort(streams)
	for _, s := range slices.Compact(streams) {
		p.Publish = append(p.Publish, readSubjects(s, readers)...)
	}
	for _, c := range g.Consume {
		deadLetters := events.DeadLetterSubject(c.Name)
		if c.Name == "*" {
			deadLetters = "flotilla.deadletter.*"
		}
		p.Publish = append(p.Publish, jsAck+c.Stream+"."+c.Name+".>", deadLetters)
	}
	if len(g.Buckets) > 0 {
		// Opening a bucket asks for the account's JetStream info first.
		p.Publish = append(p.Publish, jsAPI+"INFO")
	}
	for _, b := range g.Buckets {
		// Read by stream info, direct get and writes: no consumer.
		p.Publish = append(p.Publish, readSubjects("KV_"+b, nil)...)
		p.Publish = append(p.Publish, jsAPI+"STREAM.CREATE.KV_"+b, "$KV."+b+".>")
	}
	if g.EnsureStreams {
		for _, s := range events.Streams {
			p.Publish = append(p.Publish, jsAPI+"STREAM.CREATE."+s.Name, jsAPI+"STREAM.UPDATE."+s.Name, jsAPI+"STREAM.INFO."+s.Name)
		}
	}
	slices.Sort(p.Publish)
	p.Publish = slices.Compact(p.Publish)
	slices.Sort(p.PublishDeny)
	p.PublishDeny = slices.Compact(p.PublishDeny)
	return p
}

// readSubjects are the JetStream API subjects of reading stream s: its
// info, message get and direct get, inspecting its consumers, and
// creating, pulling from and deleting the consumers named readers, with
// any filter. None of them can create, pull from or acknowledge for
// another consumer.
func readSubjects(s string, readers []string) []string {
	out := []string{
		jsAPI + "STREAM.INFO." + s,
		jsAPI + "STREAM.MSG.GET." + s,
		jsAPI + "DIRECT.GET." + s,
		jsAPI + "DIRECT.GET." + s + ".>",
		jsAPI + "CONSUMER.INFO." + s + ".*",
	}
	for _, r := range readers {
		out = append(out, ownSubjects(s, r)...)
	}
	return out
}

// ownSubjects are the subjects of having consumer name of stream: creating
// and updating it (with any filter), inspecting it, pulling from it,
// deleting it and acknowledging its messages.
func ownSubjects(stream, name string) []string {
	c := stream + "." + name
	return []string{
		jsAPI + "CONSUMER.CREATE." + c, jsAPI + "CONSUMER.CREATE." + c + ".>",
		jsAPI + "CONSUMER.INFO." + c, jsAPI + "CONSUMER.MSG.NEXT." + c,
		jsAPI + "CONSUMER.DELETE." + c, jsAck + c + ".>",
	}
}

// anyConsumerSubjects are the subjects of binding any consumer of stream
// (a "*" of Grant.Consume), less what Grant.Foreign denies.
func anyConsumerSubjects(stream string) []string {
	return []string{
		jsAPI + "CONSUMER.CREATE." + stream + ".*", jsAPI + "CONSUMER.CREATE." + stream + ".*.>",
		jsAPI + "CONSUMER.INFO." + stream + ".*", jsAPI + "CONSUMER.MSG.NEXT." + stream + ".*",
	}
}

// consumerSubjects are the JetStream API subjects of creating and updating
// the one consumer name of stream with filters (one filter travels in the
// subject, where the server checks it; several travel in the request, and
// the subject carries none), inspecting it, pulling from it and deleting it.
func consumerSubjects(stream, name string, filters ...string) []string {
	c := stream + "." + name
	// Deleting: a daemon that rebuilds by replaying a stream starts its
	// consumer afresh (policyd beside other instances).
	out := []string{jsAPI + "CONSUMER.INFO." + c, jsAPI + "CONSUMER.MSG.NEXT." + c, jsAPI + "CONSUMER.DELETE." + c}
	if len(filters) != 1 {
		return append(out, jsAPI+"CONSUMER.CREATE."+c)
	}
	return append(out, jsAPI+"CONSUMER.CREATE."+c+"."+filters[0])
}
