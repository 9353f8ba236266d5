package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newExplain(g *globals) *cobra.Command {
	var namespace, output string
	c := &cobra.Command{
		Use:   "explain KIND/NAME [-n NS]",
		Short: "Explain a placement: the policy, every cluster's verdict, the scores and the replica arithmetic",
		Long: `Explain why a template is placed where it is: which policy claimed it,
which clusters passed every filter and why each other cluster was left out
(one line per cluster, plugin and reason), the scores, and how the replicas
were divided. Read from the latest placement decision on the bus.`,
		Example: "  flotilla explain deployment/my-app\n  flotilla explain deploy/nginx-web -n default -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withBus(cmd.Context(), func(bus *natsbus.Bus) error {
				if _, _, err := readmodel.SplitRef(args[0]); err != nil {
					return err
				}
				ms, err := latest(cmd.Context(), bus, events.StreamPlacement, events.AllPlacements)
				if err != nil {
					return err
				}
				p, err := readmodel.ExplainPlacement(ms, args[0], namespace)
				if err != nil {
					return err
				}
				if output == "json" || output == "yaml" {
					_, err := printStructured(cmd.OutOrStdout(), output, []events.PlacementDecision{p})
					return err
				}
				explain(cmd.OutOrStdout(), p)
				return nil
			})
		},
	}
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace")
	c.Flags().StringVarP(&output, "output", "o", "", "json or yaml: the whole decision")
	return c
}

func explain(out io.Writer, p events.PlacementDecision) {
	fmt.Fprintf(out, "Template:    %s\n", p.Key.Ref())
	if b := p.Binding; b != nil && b.Policy != nil {
		ns := ""
		if b.Policy.Namespace != "" {
			ns = " -n " + b.Policy.Namespace
		}
		fmt.Fprintf(out, "Policy:      %s/%s%s\n", strings.ToLower(b.Policy.Kind), b.Policy.Name, ns)
		if b.Replicas > 0 {
			fmt.Fprintf(out, "Replicas:    %d\n", b.Replicas)
		}
		if sp := b.Spec; sp != nil && sp.SchedulePriority != nil {
			fmt.Fprintf(out, "Priority:    %d (PriorityClass %s)\n", b.SchedulePriority, sp.SchedulePriority.PriorityClassName)
		}
		if g := b.WorkloadAffinityGroups; g != nil {
			fmt.Fprintf(out, "Groups:      affinity %s, anti-affinity %s\n", orNone(g.AffinityGroup), orNone(g.AntiAffinityGroup))
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
			entry += " (whole: " + placedComponents(c.Components) + ")"
		}
		placed = append(placed, entry)
	}
	fmt.Fprintf(out, "Placement:   %s\n", orNone(strings.Join(placed, " ")))
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
	w := table(out)
	fmt.Fprintln(w, "  CLUSTER\tVERDICT\tSCORE\tREASON")
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if reasons, out := p.Diagnosis[n]; out {
			fmt.Fprintf(w, "  %s\tfiltered\t-\t%s\n", n, strings.Join(reasons, "; "))
			continue
		}
		fmt.Fprintf(w, "  %s\tfeasible\t%d\t\n", n, p.Scores[n])
	}
	_ = w.Flush()
	if len(p.Evictions) > 0 {
		fmt.Fprintln(out, "Evictions (failover; these clusters are no candidates until flotilla reschedule):")
		w := table(out)
		fmt.Fprintln(w, "  CLUSTER\tREASON\tEVICTED\tOLD COPY\tWHY")
		for _, e := range p.Evictions {
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", e.Cluster, e.Reason, e.EvictedAt.Format("2006-01-02 15:04:05Z07:00"), readmodel.OldCopy(e), e.Message)
		}
		_ = w.Flush()
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

// placedComponents is "head=1 worker=4".
func placedComponents(cs []policy.ComponentReplicas) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%d", c.Name, c.Replicas))
	}
	return strings.Join(out, " ")
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
