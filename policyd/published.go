package policyd

import (
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
	// Causes: the id of the event that caused each template's latest binding.
	Causes map[events.ObjectKey]string
}

// NewPublished returns an empty Published, ready for Apply.
func NewPublished() Published {
	return Published{Records: map[events.ObjectKey]events.ObjectRecord{}, Bindings: map[events.ObjectKey]events.Binding{},
		Live: map[events.ObjectKey]bool{}, Causes: map[events.ObjectKey]string{}}
}

// ReadPublished reads the latest object and binding event of every subject
// and folds them in stream order (Apply). The two subject sets are read
// separately (one filter each, which every nats-server version counts
// right) and merged by stream sequence.
func ReadPublished(ctx context.Context, bus *natsbus.Bus) (Published, error) {
	ms, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllObjects)
	if err != nil {
		return Published{}, err
	}
	bs, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllBindings)
	if err != nil {
		return Published{}, err
	}
	ms = append(ms, bs...)
	p := NewPublished()
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Sequence < ms[j].Sequence })
	for _, m := range ms {
		if m.Err == nil {
			p.Apply(m.Event)
		}
	}
	return p, nil
}

// Apply folds one event into p; events must come in the order they were
// stored. object.accepted sets an object's record and object.removed
// forgets it. binding.changed sets the binding, and also the template's
// record when it carries a newer generation than the record read so far
// (or there is none): policyd publishes only the binding for a template
// generation a policy claims, and a binding of an older generation (the
// binding a reschedule republishes after its policy went away, say) says
// nothing about the template. binding.removed ends the binding. Events that
// do not decode are skipped.
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
		p.Bindings[b.Key], p.Live[b.Key], p.Causes[b.Key] = b, live, events.CausationID(e)
		if !live {
			return
		}
		if old, ok := p.Records[b.Key]; !ok || b.Generation > old.Generation {
			p.Records[b.Key] = b.TemplateRecord()
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
