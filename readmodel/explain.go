package readmodel

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// WriteExplanation writes what `flotilla explain` prints for placement p:
// the policy, every cluster's verdict with the plugin and reason, the
// scores, the division, the evictions, what changed since and the
// warnings. The web console shows the same text.
func WriteExplanation(out io.Writer, p events.PlacementDecision, f Fleet) {
	fmt.Fprintf(out, "Template:    %s\n", p.Key.Ref())
	if b := p.Binding; b != nil && b.Policy != nil {
		ns := ""
		if b.Policy.Namespace != "" {
			ns = " -n " + b.Policy.Namespace
		}
		gone := ""
		if lapse := f.Published.ClaimLapse(p.Key); lapse != "" {
			gone = " (" + lapse + ": no policy claims the template now; it stays where it runs)"
		}
		fmt.Fprintf(out, "Policy:      %s/%s%s%s\n", strings.ToLower(b.Policy.Kind), b.Policy.Name, ns, gone)
		if b.Replicas > 0 {
			fmt.Fprintf(out, "Replicas:    %d\n", b.Replicas)
		}
		if sp := b.Spec; sp != nil && sp.SchedulePriority != nil {
			fmt.Fprintf(out, "Priority:    %d (PriorityClass %s)\n", b.SchedulePriority, sp.SchedulePriority.PriorityClassName)
		}
		if g := b.WorkloadAffinityGroups; g != nil {
			fmt.Fprintf(out, "Groups:      affinity %s, anti-affinity %s\n", noneIfEmpty(g.AffinityGroup), noneIfEmpty(g.AntiAffinityGroup))
		}
		if in := b.Interpretation; in != nil {
			fmt.Fprintf(out, "Interpreter: ResourceInterpreterCustomization %s\n", strings.Join(in.Names, ", "))
		}
		if len(b.Components) > 0 {
			fmt.Fprintf(out, "Components:  %s\n", componentList(b.Components))
		}
	}
	fmt.Fprintf(out, "Generation:  %d (binding revision %d), decided %s\n", p.Generation, p.BindingRevision, p.DecidedAt.Format("2006-01-02 15:04:05Z07:00"))
	fmt.Fprintf(out, "Strategy:    %s\n", p.Strategy)
	if p.Scheduled {
		fmt.Fprintln(out, "Scheduled:   yes")
	} else {
		fmt.Fprintf(out, "Scheduled:   no: %s\n", p.Error)
	}
	var placed []string
	for _, c := range p.Clusters {
		entry := fmt.Sprintf("%s=%d", c.Name, c.Replicas)
		if len(c.Components) > 0 {
			entry += " (whole: " + PlacedComponents(c.Components) + ")"
		}
		placed = append(placed, entry)
	}
	fmt.Fprintf(out, "Placement:   %s\n", noneIfEmpty(strings.Join(placed, " ")))
	if p.Division != "" {
		fmt.Fprintf(out, "Division:    %s\n", p.Division)
	}
	fmt.Fprintln(out, "Clusters:")
	names := map[string]bool{}
	for _, n := range p.Feasible {
		names[n] = true
	}
	for n := range p.Diagnosis {
		names[n] = true
	}
	w := tabwriter.NewWriter(out, 0, 0, 3, ' ', 0)
	fmt.Fprintln(w, "  CLUSTER\tVERDICT\tSCORE\tREASON")
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if reasons, out := p.Diagnosis[n]; out {
			fmt.Fprintf(w, "  %s\tfiltered\t-\t%s\n", n, strings.Join(reasons, "; "))
			continue
		}
		score, _ := p.Scores.Score(n)
		fmt.Fprintf(w, "  %s\tfeasible\t%d\t%s\n", n, score, notSelected(p, n))
	}
	_ = w.Flush()
	if len(p.Evictions) > 0 {
		fmt.Fprintln(out, "Evictions (failover; no candidates while listed; flotilla reschedule forgets all but a Gracefully kept copy within its grace period):")
		w := tabwriter.NewWriter(out, 0, 0, 3, ' ', 0)
		fmt.Fprintln(w, "  CLUSTER\tREASON\tEVICTED\tOLD COPY\tWHY")
		for _, e := range p.Evictions {
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", e.Cluster, e.Reason, e.EvictedAt.Format("2006-01-02 15:04:05Z07:00"), OldCopy(e), e.Message)
		}
		_ = w.Flush()
	}
	if b := p.Binding; b != nil {
		for _, n := range NonMembers(b.Spec, MemberNames(f.Clusters)) {
			fmt.Fprintf(out, "Not member:  %s\n", n)
		}
	}
	for _, change := range ChangedSince(p, f.Clusters) {
		fmt.Fprintf(out, "Since:       %s\n", change)
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(out, "Warning:     %s\n", warn)
	}
}

// componentList is "head=1 (cpu 1), worker=4 (cpu 2)": each component's
// replicas and one replica's requests.
func componentList(cs []policy.Component) string {
	var out []string
	for _, c := range cs {
		e := fmt.Sprintf("%s=%d", c.Name, c.Replicas)
		if r := c.ReplicaRequirements; r != nil && len(r.ResourceRequest) > 0 {
			var req []string
			for _, n := range slices.Sorted(maps.Keys(r.ResourceRequest)) {
				q := r.ResourceRequest[n]
				req = append(req, string(n)+" "+q.String())
			}
			e += " (" + strings.Join(req, ", ") + ")"
		}
		out = append(out, e)
	}
	return strings.Join(out, ", ")
}

// PlacedComponents is "head=1 worker=4".
func PlacedComponents(cs []policy.ComponentReplicas) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%d", c.Name, c.Replicas))
	}
	return strings.Join(out, " ")
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// notSelected says why feasible cluster n is not in scheduled placement p
// ("" when it is, or p was not scheduled): spreadConstraints chose other
// clusters, or the division gave it no replicas.
func notSelected(p events.PlacementDecision, n string) string {
	if !p.Scheduled || slices.ContainsFunc(p.Clusters, func(c events.TargetCluster) bool { return c.Name == n }) {
		return ""
	}
	if b := p.Binding; b != nil && b.Spec != nil && len(b.Spec.Placement.SpreadConstraints) > 0 {
		return "not selected: spreadConstraints chose other clusters (by score)"
	}
	return "not selected: the division gave it no replicas"
}
