package readmodel

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/flotilla-io/flotilla/events"
)

// Work phases the read model adds to executord's (events.WorkPending ...).
const (
	// WorkEvicted: failover evicted the cluster and keeps the old copy.
	WorkEvicted = "Evicted"
	// WorkUnknown: the cluster is lost, so its last report is not current.
	WorkUnknown = "Unknown"
)

// KeptNoReplacement starts the message of an evicted copy failover keeps
// past its grace period because no replacement is placed and healthy
// (events.Eviction.Held): the copy stays until one is, a reschedule, or the
// template's deletion.
const KeptNoReplacement = "kept: no replacement"

// OldCopy says what became of the copy eviction e left behind, as `get
// work` and `explain` show it: "kept (MODE)", "kept: no replacement (WHY)"
// or "purged: REASON".
func OldCopy(e events.Eviction) string {
	switch {
	case !e.Kept() && e.PurgeReason != "":
		return "purged: " + e.PurgeReason
	case !e.Kept():
		return "purged"
	case e.Held != "":
		return KeptNoReplacement + " (" + e.Held + ")"
	}
	return "kept (" + e.PurgeMode + ")"
}

// Work is every template's work in every member cluster: executord's
// reports joined with the placements. Items is what `-o json|yaml` prints;
// Phase says what the tables show.
type Work struct {
	// Items: one per template and cluster, in key then cluster order, with
	// the phase of the join (see Join).
	Items []events.WorkStatus
	// lost: the lost clusters and why (LostClusters).
	lost map[string]string
}

// Join joins the latest work status of every template and cluster
// (events.AllWork on events.StreamWork) with the placement decisions
// (Decisions) and the health reports (events.AllHealth on
// events.StreamHealth). An item's phase is:
//   - Pending for a placed cluster executord has not reported on yet (aged
//     from the decision);
//   - Evicted for a reported cluster the placement no longer lists because
//     failover evicted it and keeps its copy (the message says why, and
//     starts with KeptNoReplacement once the copy is held past its grace
//     period);
//   - Deleting for any other reported cluster the placement no longer lists
//     (until executord reports it gone);
//   - else the phase executord reported.
func Join(reports []Stored, decisions []events.PlacementDecision, health []Stored) Work {
	type workID struct {
		key     events.ObjectKey
		cluster string
	}
	reported := map[workID]events.WorkStatus{}
	for _, m := range reports {
		var s events.WorkStatus
		if m.is(events.TypeWorkStatusChanged) && events.Decode(m.Event, &s) == nil {
			reported[workID{s.Key, s.Cluster}] = s
		}
	}
	placed := map[workID]bool{}
	evicted := map[workID]events.Eviction{}
	var items []events.WorkStatus
	for _, p := range decisions {
		for _, e := range p.Evictions {
			evicted[workID{p.Key, e.Cluster}] = e
		}
		for _, c := range p.Clusters {
			id := workID{p.Key, c.Name}
			placed[id] = true
			if _, ok := reported[id]; !ok {
				items = append(items, events.WorkStatus{Key: p.Key, Cluster: c.Name, Generation: p.Generation, Phase: events.WorkPending, Replicas: c.Replicas, CreatedAt: p.DecidedAt})
			}
			// The dependencies propagateDeps carries go where their
			// workload goes, with no placement of their own: they were
			// shown Deleting for as long as they ran.
			if p.Binding != nil {
				for _, d := range p.Binding.Dependencies {
					placed[workID{d.Key, c.Name}] = true
				}
			}
		}
	}
	for id, s := range reported {
		if e, ok := evicted[id]; ok && !placed[id] && e.Kept() {
			s.Phase = WorkEvicted
			s.Message = fmt.Sprintf("evicted (%s), copy kept (%s): %s", e.Reason, e.PurgeMode, e.Message)
			if e.Held != "" {
				s.Message = fmt.Sprintf("%s; evicted (%s): %s", OldCopy(e), e.Reason, e.Message)
			}
		} else if !placed[id] {
			s.Phase = events.WorkDeleting
		}
		items = append(items, s)
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].Key.String() != items[j].Key.String() {
			return items[i].Key.String() < items[j].Key.String()
		}
		return items[i].Cluster < items[j].Cluster
	})
	return Work{Items: items, lost: LostClusters(health)}
}

// Filter keeps the items keep accepts.
func (w Work) Filter(keep func(events.WorkStatus) bool) Work {
	var items []events.WorkStatus
	for _, s := range w.Items {
		if keep(s) {
			items = append(items, s)
		}
	}
	return Work{Items: items, lost: w.lost}
}

// Phase is the phase and message `get work`, `get KIND/NAME` and `describe
// work` show for s, an item of w: Unknown while s's cluster is lost (it
// cannot report, so its last report is not shown as current; the message
// says since when and what it last reported, and that its copy is held
// if it is), unless s is Deleted; otherwise s's own phase and message.
func (w Work) Phase(s events.WorkStatus) (phase, message string) {
	if why, ok := w.lost[s.Cluster]; ok && s.Phase != events.WorkDeleted {
		message = fmt.Sprintf("cluster %s; last reported %s", why, s.Phase)
		if s.Phase == WorkEvicted && strings.HasPrefix(s.Message, KeptNoReplacement) {
			// The lost cluster is where the only copy runs: say so.
			message += "; " + s.Message
		}
		return WorkUnknown, message
	}
	return s.Phase, s.Message
}

// Health is the health `get work -o wide` shows for s, an item of w:
// events.WorkHealthUnknown whenever Phase is Unknown (a lost cluster's last
// health is no more current than its last phase), otherwise s's own ("" if
// executord reported none).
func (w Work) Health(s events.WorkStatus) string {
	if phase, _ := w.Phase(s); phase == WorkUnknown {
		return events.WorkHealthUnknown
	}
	return s.Health
}

// Template is one template: its placement and its work in every member,
// as `get KIND/NAME` and `describe work` show it.
type Template struct {
	Placement events.PlacementDecision `json:"placement"`
	Work      []events.WorkStatus      `json:"work"`
	// AggregatedStatus is the template's status as its kind's
	// statusAggregation script computes it from the members' reflected
	// status; nil without such a script. AggregationError says why the
	// script failed.
	AggregatedStatus map[string]any `json:"aggregatedStatus,omitempty"`
	AggregationError string         `json:"aggregationError,omitempty"`
	// work: Work restricted to this template, for Phase.
	work Work
}

// Phase is Work.Phase for s, an item of t.Work.
func (t Template) Phase(s events.WorkStatus) (phase, message string) { return t.work.Phase(s) }

// FindTemplate finds the placed template ref (KIND/NAME, or NAME alone)
// names in namespace among the decisions, and its work (w, from Join).
// A name more than one placed template shares is an *AmbiguousError.
func FindTemplate(decisions []events.PlacementDecision, w Work, ref, namespace string) (Template, error) {
	p, err := Resolve(ref, namespace, decisions, decisionKey, "templates")
	if errors.Is(err, ErrNotFound) {
		if !strings.Contains(ref, "/") {
			ref = "*/" + ref
		}
		return Template{}, fmt.Errorf("no placed template %s in namespace %s (flotilla get placements -A lists them)", ref, namespace)
	}
	if err != nil {
		return Template{}, err
	}
	return templateOf(p, w), nil
}

// templateOf is the template p places, with its work among w and the
// status its kind's statusAggregation script computes, if it has one.
func templateOf(p events.PlacementDecision, w Work) Template {
	t := Template{Placement: p, work: w.Filter(func(s events.WorkStatus) bool { return s.Key == p.Key })}
	t.Work = t.work.Items
	if st, ok, err := aggregate(p, t.Work); ok {
		t.AggregatedStatus = st
		if err != nil {
			t.AggregationError = err.Error()
		}
	}
	return t
}
