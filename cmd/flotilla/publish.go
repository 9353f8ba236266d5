package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newPublish(g *globals) *cobra.Command {
	var file, subject string
	var allowDuplicates, validate bool
	c := &cobra.Command{
		Use:   "publish -f event.json",
		Short: "Publish CloudEvents (structured JSON) from an external system",
		Long: `Publish one CloudEvent, or a JSON array of them, in CloudEvents structured
JSON form. The event is sent in binary mode on the subject its type belongs
to: io.flotilla.object.applied.v1 / deleted.v1 go to flotilla.input.<key of
the object in data>, exactly as flotilla apply/delete would, and policyd
treats them the same way (it validates them: a bad one is dead-lettered with
the reason). --subject overrides the NATS subject.

An array is checked whole first: if any element is not a valid CloudEvent
1.0, is one policyd would certainly dead-letter (a type not in the event
catalogue or not an input on an input subject, an applied object its
validator refuses, a deletion naming no object), or two elements share an
id, nothing is sent and every problem is reported with the element's
number and the field. --validate=false sends what policyd will refuse (to
see it dead-lettered); the CloudEvents themselves are still checked. The event id is JetStream's
de-duplication id: an event whose id the stream has already seen (within its
5-minute duplicate window) is not stored, and publish says so and exits 1.
With --allow-duplicates such an event counts as published when its content
(NATS subject, type, source, subject and data) equals the stored event's, so a
retry of the same event is idempotent; different content is still refused.
Comparing reads the stored event, which a publisher credential may not: use
a viewer or admin credential for --allow-duplicates.`,
		Example: `  flotilla publish -f event.json   # {"specversion":"1.0","type":"io.flotilla.object.applied.v1","source":"/ci","id":"1","data":{...}}
  flotilla publish -f events.json --allow-duplicates   # retry a batch that may have been partly stored`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			raw, err := readFileOrStdin(cmd, file)
			if err != nil {
				return err
			}
			out, err := decodePending(raw, file, subject, allowDuplicates, validate)
			if err != nil {
				return err
			}
			return g.withBus(cmd.Context(), func(bus *natsbus.Bus) error {
				var refused []error
				for _, o := range out {
					msg, err := publishPending(cmd.Context(), bus, o, allowDuplicates)
					var dup duplicateError
					if errors.As(err, &dup) {
						refused = append(refused, fmt.Errorf("%s: %w", o.name, err))
						continue
					}
					if err != nil {
						return fmt.Errorf("%s: %w", o.name, err)
					}
					fmt.Fprintln(cmd.OutOrStdout(), msg)
				}
				return errors.Join(refused...)
			})
		},
	}
	c.Flags().StringVarP(&file, "filename", "f", "", "event file (JSON), or - for stdin")
	c.Flags().StringVar(&subject, "subject", "", "NATS subject (default: derived from the event)")
	c.Flags().BoolVar(&validate, "validate", true, "refuse events policyd is certain to dead-letter (false: send them, to test dead-lettering)")
	c.Flags().BoolVar(&allowDuplicates, "allow-duplicates", false, "accept an event whose id is already stored when its content is identical (an idempotent retry)")
	_ = c.MarkFlagRequired("filename")
	return c
}

// pending is one event of the input, checked and ready to send.
type pending struct {
	name    string // how errors name it: "<file>: event <n> (id <id>)"
	event   events.Event
	subject string // NATS subject
}

// decodePending decodes and checks every event of raw (one structured
// CloudEvent or an array of them) before anything is sent, so an array is
// published whole or not at all as far as its own content can tell: an
// element that is not a CloudEvent 1.0, or that policyd would certainly
// dead-letter (inputChecks, unless validate is false), stops it, and every
// such problem of every element is reported. Two elements sharing an id are refused unless
// allowDuplicates is set and their content is identical (JetStream would
// store only the first). An empty array is an error: there is nothing to
// publish.
func decodePending(raw []byte, file, subject string, allowDuplicates, validate bool) ([]pending, error) {
	var list []json.RawMessage
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(list) == 0 {
			return nil, fmt.Errorf("%s: no events: the array is empty\n(nothing was published)", file)
		}
	} else {
		list = []json.RawMessage{raw}
	}
	out := make([]pending, 0, len(list))
	var problems []string
	type firstOf struct{ at, element int } // index in out, element number
	first := map[string]firstOf{}          // by event id
	for i, r := range list {
		e, bad := decodeEvent(r)
		if len(bad) == 0 {
			o := pending{name: fmt.Sprintf("%s: event %d (id %q)", file, i+1, e.ID()), event: e, subject: subject}
			if o.subject == "" {
				o.subject = inputSubjectFor(e)
			}
			if validate {
				bad = inputChecks(e, o.subject)
			}
			if f, seen := first[e.ID()]; seen {
				if !allowDuplicates || !sameContent(out[f.at].subject, out[f.at].event, o.subject, e) {
					bad = append(bad, fmt.Sprintf("duplicate id of event %d: only the first would be stored", f.element))
				}
			} else {
				first[e.ID()] = firstOf{len(out), i + 1}
			}
			out = append(out, o)
		}
		for _, b := range bad {
			problems = append(problems, fmt.Sprintf("%s: event %d: %s", file, i+1, b))
			if e.ID() != "" {
				problems[len(problems)-1] = fmt.Sprintf("%s: event %d (id %q): %s", file, i+1, e.ID(), b)
			}
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n") + "\n(nothing was published)")
	}
	return out, nil
}

// duplicateError says an event was not stored because its id was.
type duplicateError struct{ error }

// publishPending sends o and returns the line to print. An event JetStream
// dropped as a duplicate is a duplicateError, unless allowDuplicates is set
// and the stored event with its id has the same content.
func publishPending(ctx context.Context, bus *natsbus.Bus, o pending, allowDuplicates bool) (string, error) {
	ack, err := bus.PublishAck(ctx, o.subject, o.event)
	if err != nil {
		return "", err
	}
	if !ack.Duplicate {
		return fmt.Sprintf("published %s %s on %s", o.event.Type(), o.event.ID(), o.subject), nil
	}
	where := fmt.Sprintf("%s sequence %d", ack.Stream, ack.Sequence)
	if !allowDuplicates {
		return "", duplicateError{fmt.Errorf("duplicate id, not stored: an event with this id is stored at %s (--allow-duplicates accepts an identical retry)", where)}
	}
	stored, err := bus.FetchMessage(ctx, ack.Stream, ack.Sequence)
	if errors.Is(err, natsbus.ErrMessageGone) {
		return "", duplicateError{fmt.Errorf("duplicate id, not stored: the event first stored with this id at %s is gone, so its content cannot be compared", where)}
	}
	if err != nil {
		return "", err
	}
	if stored.Err != nil || !sameContent(stored.Subject, stored.Event, o.subject, o.event) {
		return "", duplicateError{fmt.Errorf("duplicate id with different content, not stored: the event stored with this id at %s differs", where)}
	}
	return fmt.Sprintf("already stored %s %s on %s (%s, identical)", o.event.Type(), o.event.ID(), o.subject, where), nil
}

// sameContent reports whether two events published on subjects as and bs
// say the same thing: the same NATS subject, type, source, CloudEvents
// subject and data (JSON data compared as values, so spacing and key order
// do not matter). Ids are not compared (the caller knows they match), nor
// times: a retry may stamp a new time on the same event.
func sameContent(as string, a events.Event, bs string, b events.Event) bool {
	return as == bs && a.Type() == b.Type() && a.Source() == b.Source() && a.Subject() == b.Subject() && readmodel.SameJSON(a.Data(), b.Data())
}

// inputSubjectFor derives the input subject from the object in the event's data.
func inputSubjectFor(e events.Event) string {
	var obj readmodel.ObjectIdentity
	_ = json.Unmarshal(e.Data(), &obj)
	if obj.Kind == "" || obj.Metadata.Name == "" {
		return events.InputSubject(events.ObjectKey{Kind: "Event", Name: e.ID()})
	}
	ns := obj.Metadata.Namespace
	if ns == "" && events.RoleOf(obj.APIVersion, obj.Kind, "") == events.RoleTemplate && obj.Kind != "Namespace" {
		ns = "default"
	}
	return events.InputSubject(events.KeyOf(obj.APIVersion, obj.Kind, ns, obj.Metadata.Name))
}

func readFileOrStdin(cmd *cobra.Command, file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(cmd.InOrStdin())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return b, nil
}
