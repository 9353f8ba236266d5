package console

import (
	"fmt"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// entry is one step of a template's history as its timeline shows it.
type entry struct {
	At time.Time
	// What: applied, bound, unbound, placed, rescheduled, moved, purged,
	// work, removed, unscheduled.
	What, Text string
	// From and To: the placements before and after a move or reschedule.
	From, To string
}

// timeline reads a template's history (Source.History, oldest first) as
// the steps a person asks about: accepted, placed, moved by failover from
// → to, purged, rescheduled, a member's work changing phase or replicas,
// deleted. A decision that places the template where it already was, a
// failover's own decision (its move is the step), and a work report that
// changes neither phase nor replicas are no step.
func timeline(history []Event) []entry {
	var out []entry
	var placed string
	phases := map[string]string{}
	for _, e := range history {
		if e.Err != nil {
			continue
		}
		at := e.Time
		add := func(what, format string, args ...any) {
			out = append(out, entry{At: at, What: what, Text: fmt.Sprintf(format, args...)})
		}
		switch events.Type(e.Event.Type()) {
		case events.TypeObjectAccepted:
			var r events.ObjectRecord
			if events.Decode(e.Event, &r) == nil {
				add("applied", "generation %d accepted", r.Generation)
			}
		case events.TypeObjectRemoved:
			add("removed", "deleted")
		case events.TypeBindingChanged:
			var b events.Binding
			if events.Decode(e.Event, &b) == nil {
				text := fmt.Sprintf("generation %d accepted", b.Generation)
				if b.Policy != nil {
					text += ", claimed by " + strings.ToLower(b.Policy.Kind) + "/" + b.Policy.Name
				}
				add("bound", "%s (binding revision %d)", text, b.Revision)
			}
		case events.TypeBindingRemoved:
			add("unbound", "no policy claims it any more")
		case events.TypePlacementDecided:
			var p events.PlacementDecision
			if events.Decode(e.Event, &p) != nil {
				continue
			}
			now := targets(p.Clusters)
			switch {
			case !p.Scheduled && now == "":
				add("unscheduled", "not scheduled: %s", p.Error)
			case placed == "":
				add("placed", "placed on %s", now)
			case now != placed && !(len(out) > 0 && out[len(out)-1].What == "moved" && out[len(out)-1].To == now):
				// (A failover's decision is its move, already listed.)
				out = append(out, entry{At: at, What: "rescheduled", Text: "placed anew", From: placed, To: now})
			}
			placed = now
		case events.TypePlacementRemoved:
			add("removed", "placed nowhere any more")
			placed = ""
		case events.TypeFailoverEvicted:
			var f events.FailoverRecord
			if events.Decode(e.Event, &f) != nil {
				continue
			}
			text := fmt.Sprintf("moved by failover away from %s (%s): %s", f.Eviction.Cluster, f.Eviction.Reason, f.Eviction.Message)
			if f.Error != "" {
				text += "; not placed elsewhere: " + f.Error
			}
			if n := len(out); n > 0 && out[n-1].What == "rescheduled" && out[n-1].To == targets(f.To) {
				out = out[:n-1] // the move's own decision, stored just before it
			}
			out = append(out, entry{At: at, What: "moved", Text: text, From: targets(f.From), To: targets(f.To)})
		case events.TypeFailoverPurged:
			var f events.FailoverRecord
			if events.Decode(e.Event, &f) == nil {
				add("purged", "the old copy in %s released for deletion: %s", f.Eviction.Cluster, f.Eviction.PurgeReason)
			}
		case events.TypeWorkStatusChanged, events.TypeWorkDeleted:
			var s events.WorkStatus
			if events.Decode(e.Event, &s) != nil {
				continue
			}
			state := fmt.Sprintf("%s %d/%d", s.Phase, s.ReadyReplicas, s.Replicas)
			if phases[s.Cluster] == state {
				continue
			}
			phases[s.Cluster] = state
			text := fmt.Sprintf("%s: %s", s.Cluster, s.Phase)
			if s.Replicas > 0 {
				text += fmt.Sprintf(", %d/%d ready", s.ReadyReplicas, s.Replicas)
			}
			if s.Message != "" {
				text += ": " + s.Message
			}
			add("work", "%s", text)
		}
	}
	return out
}

// targets formats a placement: "cluster1=2, cluster2=2" ("nowhere" for none).
func targets(cs []events.TargetCluster) string {
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, 0, len(cs))
	for _, c := range cs {
		if c.Replicas > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", c.Name, c.Replicas))
		} else {
			parts = append(parts, c.Name)
		}
	}
	return strings.Join(parts, ", ")
}

// Filter is one subject filter on one stream.
type Filter struct{ Stream, Filter string }

// HistorySubjects are where a template's history is stored: its accepted
// object and bindings, its placements and failovers, and its work in every
// member. Source.History reads them.
func HistorySubjects(key events.ObjectKey) []Filter {
	tokens := strings.TrimPrefix(events.ObjectSubject(key), "flotilla.object.")
	return []Filter{
		{events.StreamPolicy, events.ObjectSubject(key)},
		{events.StreamPolicy, events.BindingSubject(key)},
		{events.StreamPlacement, events.PlacementSubject(key)},
		{events.StreamPlacement, events.FailoverSubject(key)},
		{events.StreamWork, "flotilla.work.*." + tokens},
	}
}
