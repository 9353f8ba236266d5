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
	streams := slices.Clone(g.Read)
	for _, c := range g.Consume {
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
	if len(g.Consume) > 0 {
		// Handling an unreadable message looks up earlier dead letters.
		p.Publish = append(p.Publish, readSubjects(events.StreamDeadLetter)...)
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
