package readmodel

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Decisions returns the placement.decided events among the latest
// placement of every template (events.AllPlacements on
// events.StreamPlacement), in stream order, without their bindings (what
// `get placements`, `get work` and `watch` show), except what a kind's
// statusAggregation script needs (aggregationOnly).
func Decisions(ms []Stored) []events.PlacementDecision {
	var out []events.PlacementDecision
	for _, m := range ms {
		var p events.PlacementDecision
		if !m.is(events.TypePlacementDecided) || events.Decode(m.Event, &p) != nil {
			continue
		}
		p.Binding = aggregationOnly(p.Binding)
		out = append(out, p)
	}
	return out
}

// aggregationOnly keeps of a binding what the read model reads from a
// placement's: the template and the statusAggregation script, when its
// kind has one (FindTemplate runs it), which dependencies it carries
// (Join: they run where it is placed), without their templates, and the
// replicas the template asks for (Template.Totals); nil when there is
// none of these.
func aggregationOnly(b *events.Binding) *events.Binding {
	if b == nil {
		return nil
	}
	aggregates := b.Interpretation != nil && b.Interpretation.StatusAggregation != ""
	if !aggregates && len(b.Dependencies) == 0 && b.Replicas == 0 {
		return nil
	}
	out := &events.Binding{Key: b.Key, APIVersion: b.APIVersion, Generation: b.Generation, Replicas: b.Replicas}
	for _, d := range b.Dependencies {
		out.Dependencies = append(out.Dependencies, events.Dependency{Key: d.Key, APIVersion: d.APIVersion, Generation: d.Generation})
	}
	if aggregates {
		out.Template = b.Template
		out.Interpretation = &policy.Interpretation{Names: b.Interpretation.Names, StatusAggregation: b.Interpretation.StatusAggregation}
	}
	return out
}

// ExplainPlacement returns the latest decision, binding included, for the
// template ref (KIND/NAME) names in namespace, from the latest placement of
// every template. A template whose placement was withdrawn (it was
// deleted) is an error that says so, as is one never placed.
func ExplainPlacement(ms []Stored, ref, namespace string) (events.PlacementDecision, error) {
	if _, _, err := SplitRef(ref); err != nil {
		return events.PlacementDecision{}, err
	}
	var ps []events.PlacementDecision
	removed := map[events.ObjectKey]bool{}
	for _, m := range ms {
		var p events.PlacementDecision
		if m.Err != nil || events.Decode(m.Event, &p) != nil {
			continue
		}
		ps = append(ps, p)
		removed[p.Key] = events.Type(m.Event.Type()) == events.TypePlacementRemoved
	}
	p, err := Resolve(ref, namespace, ps, decisionKey, "templates")
	if errors.Is(err, ErrNotFound) {
		if owners := dependencyOwners(ref, namespace, ps, removed); len(owners) > 0 {
			return events.PlacementDecision{}, fmt.Errorf("%s -n %s has no placement of its own: it goes with %s (propagateDeps), wherever that goes",
				shownRef(ref), namespace, strings.Join(owners, ", "))
		}
		return events.PlacementDecision{}, fmt.Errorf("no placement for %s -n %s: is the template applied and claimed by a policy? (flotilla get policies)", shownRef(ref), namespace)
	}
	if err == nil && removed[p.Key] {
		err = fmt.Errorf("%s -n %s was deleted; its placement was withdrawn", shownRef(ref), namespace)
	}
	return p, err
}

func decisionKey(p events.PlacementDecision) events.ObjectKey { return p.Key }

// dependencyOwners names, as `flotilla explain` takes them, with where
// they are placed, the templates whose bindings carry the dependency ref
// names in namespace (propagateDeps): it has no placement of its own.
func dependencyOwners(ref, namespace string, ps []events.PlacementDecision, removed map[events.ObjectKey]bool) []string {
	var deps []events.ObjectKey
	owners := map[events.ObjectKey][]string{}
	for _, p := range ps {
		if p.Binding == nil || removed[p.Key] {
			continue
		}
		for _, d := range p.Binding.Dependencies {
			if _, seen := owners[d.Key]; !seen {
				deps = append(deps, d.Key)
			}
			owners[d.Key] = append(owners[d.Key], fmt.Sprintf("%s/%s (on %s)", strings.ToLower(p.Key.Kind), p.Key.Name, noneIfEmpty(events.FormatTargets(p.Clusters))))
		}
	}
	k, err := Resolve(ref, namespace, deps, func(k events.ObjectKey) events.ObjectKey { return k }, "templates")
	if err != nil {
		return nil
	}
	slices.Sort(owners[k])
	return owners[k]
}

// shownRef is ref as kubectl names the object: the core group's kinds
// without a group (configmap/x, not configmap.core/x, which resolving
// needs to tell the core group from any other).
func shownRef(ref string) string {
	kind, name, ok := strings.Cut(ref, "/")
	if !ok {
		return ref
	}
	return strings.TrimSuffix(kind, ".core") + "/" + name
}

// Placement decodes one placement event as `watch placements` shows it, as
// it arrives: a decision, or a withdrawal (whose decision carries the key
// alone), without its binding. ok is false for an event that does not
// decode.
func Placement(m Stored) (p events.PlacementDecision, ok bool) {
	if m.Err != nil || events.Decode(m.Event, &p) != nil {
		return events.PlacementDecision{}, false
	}
	p.Binding = nil
	return p, true
}
