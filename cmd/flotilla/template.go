package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

// templateView is one template: its placement and its work in every member.
type templateView struct {
	Placement events.PlacementDecision `json:"placement"`
	Work      []events.WorkStatus      `json:"work"`
}

// loadTemplateView finds a template by KIND/NAME (or NAME alone) and joins
// its placement with executord's status per cluster.
func loadTemplateView(ctx context.Context, bus *natsbus.Bus, ref, namespace string) (templateView, error) {
	if !strings.Contains(ref, "/") {
		ref = "*/" + ref
	}
	kind, name, _ := strings.Cut(ref, "/")
	ms, err := bus.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements)
	if err != nil {
		return templateView{}, err
	}
	var v templateView
	var kinds []string
	for _, m := range ms {
		var p events.PlacementDecision
		if m.Err != nil || events.Type(m.Event.Type()) != events.TypePlacementDecided || events.Decode(m.Event, &p) != nil {
			continue
		}
		if (kind == "*" || kindMatches(kind, p.Key.Kind)) && p.Key.Name == name && (p.Key.Namespace == namespace || p.Key.Namespace == "") {
			v.Placement = p
			kinds = append(kinds, strings.ToLower(p.Key.Kind)+"/"+name)
		}
	}
	if len(kinds) > 1 {
		return v, fmt.Errorf("%s names %d templates: say which, e.g. %s", ref[2:], len(kinds), strings.Join(kinds, " or "))
	}
	if len(kinds) == 0 {
		return v, fmt.Errorf("no placed template %s in namespace %s (flotilla get placements -A lists them)", ref, namespace)
	}
	key := v.Placement.Key
	placed := map[string]events.TargetCluster{}
	for _, c := range v.Placement.Clusters {
		placed[c.Name] = c
	}
	work, err := bus.LatestPerSubject(ctx, events.StreamWork, events.AllWork)
	if err != nil {
		return v, err
	}
	seen := map[string]bool{}
	for _, m := range work {
		var s events.WorkStatus
		if m.Err != nil || events.Type(m.Event.Type()) != events.TypeWorkStatusChanged || events.Decode(m.Event, &s) != nil || s.Key != key {
			continue
		}
		if _, ok := placed[s.Cluster]; !ok {
			s.Phase = events.WorkDeleting
		}
		seen[s.Cluster] = true
		v.Work = append(v.Work, s)
	}
	for name, c := range placed {
		if !seen[name] {
			v.Work = append(v.Work, events.WorkStatus{Key: key, Cluster: name, Phase: events.WorkPending, Replicas: c.Replicas, Generation: v.Placement.Generation})
		}
	}
	sort.Slice(v.Work, func(i, j int) bool { return v.Work[i].Cluster < v.Work[j].Cluster })
	v.Placement.Binding = nil
	return v, nil
}

// printTemplateView is `flotilla get KIND/NAME`: ready/desired per cluster and in total.
func printTemplateView(out io.Writer, v templateView) error {
	w := table(out)
	fmt.Fprintf(w, "%s\n", v.Placement.Key.Ref())
	fmt.Fprintln(w, "CLUSTER\tREADY\tDESIRED\tSTATUS\tGENERATION\tAGE")
	var ready, desired int32
	for _, s := range v.Work {
		want := s.Replicas
		for _, c := range v.Placement.Clusters {
			if c.Name == s.Cluster {
				want = c.Replicas
			}
		}
		ready, desired = ready+s.ReadyReplicas, desired+want
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%d\t%s\n", s.Cluster, s.ReadyReplicas, want, s.Phase, s.Generation, age(s.CreatedAt))
	}
	fmt.Fprintf(w, "TOTAL\t%d\t%d\t\t\t\n", ready, desired)
	return w.Flush()
}

// describeWork is `flotilla describe work NAME`, like `kubectl describe work`.
func describeWork(out io.Writer, v templateView) {
	p := v.Placement
	fmt.Fprintf(out, "Name:         %s\nNamespace:    %s\nKind:         %s\nGeneration:   %d (binding revision %d)\nScheduled:    %t\n",
		p.Key.Name, p.Key.Namespace, p.Key.Kind, p.Generation, p.BindingRevision, p.Scheduled)
	if p.Error != "" {
		fmt.Fprintf(out, "Reason:       %s\n", p.Error)
	}
	fmt.Fprintln(out, "Work:")
	for _, s := range v.Work {
		fmt.Fprintf(out, "  Cluster:      %s\n    Status:     %s\n    Replicas:   %d ready of %d\n    Applied:    generation %d, observed generation %d\n",
			s.Cluster, s.Phase, s.ReadyReplicas, s.Replicas, s.Generation, s.ObservedGeneration)
		if len(s.AppliedOverrides) > 0 {
			fmt.Fprintf(out, "    Overrides:  %s\n", strings.Join(s.AppliedOverrides, ", "))
		}
		if s.Message != "" {
			fmt.Fprintf(out, "    Message:    %s\n", s.Message)
		}
		if !s.UpdatedAt.IsZero() {
			fmt.Fprintf(out, "    Updated:    %s\n", s.UpdatedAt.Format(time.RFC3339))
		}
	}
}
