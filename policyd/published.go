package policyd

import (
	"bytes"
	"context"
	"sort"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// Published is policyd's accepted state as it stands on FLOTILLA_POLICY:
// the accepted record of every object and the latest binding of every
// template. policyd rebuilds itself from it at start-up and the CLI reads
// it for `flotilla get` and KIND/NAME lookups, so both see the same thing.
type Published struct {
	Records  map[events.ObjectKey]events.ObjectRecord
	Bindings map[events.ObjectKey]events.Binding
	// Live: the template's latest binding is binding.changed (not removed).
	Live map[events.ObjectKey]bool
}

// ReadPublished reads the latest object and binding event of every subject
// and folds them in stream order (ApplyPublished).
func ReadPublished(ctx context.Context, bus *natsbus.Bus) (Published, error) {
	ms, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllObjects, events.AllBindings)
	if err != nil {
		return Published{}, err
	}
	p := Published{Records: map[events.ObjectKey]events.ObjectRecord{}, Bindings: map[events.ObjectKey]events.Binding{}, Live: map[events.ObjectKey]bool{}}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Sequence < ms[j].Sequence })
	for _, m := range ms {
		if m.Err == nil {
			p.Apply(m.Event)
		}
	}
	return p, nil
}

// Apply folds one event into p; events must come in the order they were
// stored. A template's accepted record is the newest of its object.accepted
// and its binding.changed (which carries the generation, warnings and time
// it was accepted: policyd publishes only the binding for a template a
// policy claims). object.removed forgets the record; binding.removed ends
// the binding. Events that do not decode are skipped.
func (p *Published) Apply(e events.Event) {
	switch events.Type(e.Type()) {
	case events.TypeObjectAccepted:
		var r events.ObjectRecord
		if events.Decode(e, &r) == nil {
			p.Records[r.Key] = r
		}
	case events.TypeObjectRemoved:
		var r events.ObjectRecord
		if events.Decode(e, &r) == nil {
			delete(p.Records, r.Key)
		}
	case events.TypeBindingChanged, events.TypeBindingRemoved:
		var b events.Binding
		if events.Decode(e, &b) != nil {
			return
		}
		b.Reencode()
		live := events.Type(e.Type()) == events.TypeBindingChanged
		p.Bindings[b.Key], p.Live[b.Key] = b, live
		if !live {
			return
		}
		// The record of the same generation and content already read is
		// kept: it is the same acceptance, and one written before bindings
		// carried acceptedAt and warnings has them.
		r := b.TemplateRecord()
		if old, ok := p.Records[b.Key]; !ok || old.Generation != r.Generation || !bytes.Equal(old.Object, r.Object) {
			p.Records[b.Key] = r
		}
	}
}

// SortedRecords returns the records in key order.
func (p Published) SortedRecords() []events.ObjectRecord {
	out := make([]events.ObjectRecord, 0, len(p.Records))
	for _, r := range p.Records {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key.String() < out[j].Key.String() })
	return out
}
