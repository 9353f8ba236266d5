package readmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/binding"
)

// PublishedSubjects are the subject filters, on events.StreamPolicy, whose
// latest event per subject Published is folded from. Read each filter on
// its own (one filter per read, which every nats-server version counts
// right) and hand the results together to FoldPublished.
var PublishedSubjects = []string{events.AllObjects, events.AllBindings}

// LatestReader returns the latest stored event of every subject of stream
// matching filter; the bus at the caller's edge implements it.
type LatestReader func(ctx context.Context, stream, filter string) ([]Stored, error)

// ReadPublished reads PublishedSubjects one filter at a time with read and
// folds them (FoldPublished): policyd's restart and the CLI's reads alike.
func ReadPublished(ctx context.Context, read LatestReader) (Published, error) {
	var all []Stored
	for _, f := range PublishedSubjects {
		ms, err := read(ctx, events.StreamPolicy, f)
		if err != nil {
			return Published{}, err
		}
		all = append(all, ms...)
	}
	return FoldPublished(all), nil
}

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
	// claimants caches the propagation policies ClaimLapse decoded (nil in
	// a Published not made by NewPublished: it decodes every time).
	claimants *claimantCache
}

// claimantCache holds decoded propagation policies by key, each dropped
// when Apply changes its record.
type claimantCache struct {
	mu sync.Mutex
	m  map[events.ObjectKey]*binding.Candidate
}

// NewPublished returns an empty Published, ready for Apply.
func NewPublished() Published {
	return Published{Records: map[events.ObjectKey]events.ObjectRecord{}, Bindings: map[events.ObjectKey]events.Binding{},
		Live: map[events.ObjectKey]bool{}, Causes: map[events.ObjectKey]string{}, claimants: &claimantCache{m: map[events.ObjectKey]*binding.Candidate{}}}
}

// FoldPublished folds the latest object and binding event of every subject
// (read per PublishedSubjects) in stream order: ms need not be sorted, it is
// ordered by Sequence here. Invalid events are skipped.
func FoldPublished(ms []Stored) Published {
	ms = append([]Stored(nil), ms...)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Sequence < ms[j].Sequence })
	p := NewPublished()
	for _, m := range ms {
		if m.Err == nil {
			p.Apply(m.Event)
		}
	}
	return p
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
			p.claimants.forget(r.Key)
		}
	case events.TypeObjectRemoved:
		var r events.ObjectRecord
		if events.Decode(e, &r) == nil {
			delete(p.Records, r.Key)
			p.claimants.forget(r.Key)
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

// ClaimingPolicy is the policy that claims the template at key: the one
// its live binding names, while that policy exists and still selects the
// template (ClaimLapse). A template whose policy was deleted or no longer
// selects it keeps its placement (as in Karmada) but no policy claims it.
// nil: none. revision counts the template's binding changes (0: no live
// binding).
func (p Published) ClaimingPolicy(key events.ObjectKey) (ref *events.PolicyRef, revision int64) {
	b, ok := p.Bindings[key]
	if !ok || !p.Live[key] || b.Policy == nil {
		return nil, 0
	}
	if p.ClaimLapse(key) == "" {
		ref = b.Policy
	}
	return ref, b.Revision
}

// ClaimLapse says why the policy the template's live binding names claims
// it no more ("": it does, or there is no such binding): the policy was
// deleted, or its selectors no longer select the template (Karmada drops
// the claim). Either way policyd leaves the binding as it is: the template
// stays where it runs, and nothing places it, or a change to it, anew.
func (p Published) ClaimLapse(key events.ObjectKey) string {
	b, ok := p.Bindings[key]
	if !ok || !p.Live[key] || b.Policy == nil {
		return ""
	}
	c := p.claimant(b.Policy.Key())
	if c == nil {
		if _, ok := p.Records[b.Policy.Key()]; !ok {
			return "deleted since"
		}
		return "" // unreadable: say nothing
	}
	facts, ok := p.templateFacts(key)
	if ok && !c.Selects(facts) {
		return "it no longer selects the template"
	}
	return ""
}

// claimant is the propagation policy at key, decoded once (claimants);
// nil when there is none or it does not decode.
func (p Published) claimant(key events.ObjectKey) *binding.Candidate {
	if p.claimants != nil {
		p.claimants.mu.Lock()
		defer p.claimants.mu.Unlock()
		if c, ok := p.claimants.m[key]; ok {
			return c
		}
	}
	var c *binding.Candidate
	if rec, ok := p.Records[key]; ok {
		var pp policy.PropagationPolicy
		if json.Unmarshal(rec.Object, &pp) == nil {
			c = &binding.Candidate{Key: key, Policy: pp}
		}
	}
	if p.claimants != nil {
		p.claimants.m[key] = c
	}
	return c
}

// forget drops key's decoded policy (its record changed).
func (c *claimantCache) forget(key events.ObjectKey) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// templateFacts reads what resource selectors look at from the template's
// record: its metadata only, not the whole object.
func (p Published) templateFacts(key events.ObjectKey) (policy.ResourceFacts, bool) {
	rec, ok := p.Records[key]
	if !ok {
		return policy.ResourceFacts{}, false
	}
	var head struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
	}
	if events.UnmarshalJSON(rec.Object, &head) != nil {
		return policy.ResourceFacts{}, false
	}
	return policy.ResourceFactsOf(map[string]any{"apiVersion": head.APIVersion, "kind": head.Kind, "metadata": head.Metadata}), true
}

// Created is when the object at key was first accepted (its AGE), or
// fallback when no record of it says (one accepted before policyd kept the
// creation time, or no record at all).
func (p Published) Created(key events.ObjectKey, fallback time.Time) time.Time {
	if r, ok := p.Records[key]; ok && !r.CreatedAt.IsZero() {
		return r.CreatedAt
	}
	return fallback
}

// Unchanged reports whether obj, as `flotilla apply` or hubd would publish
// it, is the object accepted at key: then publishing it changes nothing.
func (p Published) Unchanged(key events.ObjectKey, obj map[string]any) bool {
	rec, ok := p.Records[key]
	if !ok {
		return false
	}
	b, err := json.Marshal(obj)
	return err == nil && SameJSON(b, rec.Object)
}

// SameJSON compares two bodies: as JSON values when both are JSON (spacing,
// key order and number spelling do not matter), byte for byte otherwise.
func SameJSON(a, b []byte) bool {
	va, errA := decodeJSONValue(a)
	vb, errB := decodeJSONValue(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}

// decodeJSONValue decodes one JSON value, numbers kept exact.
func decodeJSONValue(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}
