package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

type listFlags struct {
	namespace string
	all       bool
	output    string
}

func (l *listFlags) register(c *cobra.Command) {
	c.Flags().StringVarP(&l.namespace, "namespace", "n", "default", "namespace")
	c.Flags().BoolVarP(&l.all, "all-namespaces", "A", false, "all namespaces")
	c.Flags().StringVarP(&l.output, "output", "o", "", "output format: wide, json or yaml")
}

func (l *listFlags) wants(ns string) bool { return l.all || ns == "" || ns == l.namespace }

// selected keeps the items whose namespace (ns) l wants.
func selected[T any](l *listFlags, items []T, ns func(T) string) []T {
	var out []T
	for _, it := range items {
		if l.wants(ns(it)) {
			out = append(out, it)
		}
	}
	return out
}

// namespaceColumn is ns as the NAMESPACE column shows it.
func namespaceColumn(ns string) string {
	if ns == "" {
		return "<cluster>"
	}
	return ns
}

func newGet(g *globals) *cobra.Command {
	l := &listFlags{}
	c := &cobra.Command{
		Use:   "get clusters|policies|templates|KIND|work|placements|deadletters|KIND/NAME",
		Short: "List member clusters, policies, templates, work, placements or dead letters",
		Long: `List what Flotilla knows, read from the streams:
  clusters     member clusters: readiness and capacity (healthd)
  policies     propagation and override policies (policyd)
  templates    resource templates with the policy that claims each (policyd)
  KIND         the templates of one kind: deployments, services, cm, ... (policyd)
  work         one row per template and cluster: Pending, Applied, Progressing, Running, Failed, Deleting (executord)
  placements   where each template is placed and why (schedulerd)
  federatedresourcequotas (frq)  each quota's overall limits and overallUsed, counted from the placements
  deadletters  events a consumer gave up on, with the reason (every daemon)
  KIND/NAME    one template: ready/desired replicas per cluster and in total`,
		Example: "  flotilla get deployment/my-app\n  flotilla get deployments -A\n  flotilla get work\n  flotilla get placements -A -o wide\n  flotilla get clusters -o yaml",
		Args:    cobra.ExactArgs(1),

		RunE: func(cmd *cobra.Command, args []string) error {
			switch l.output {
			case "", "wide", "json", "yaml":
			default:
				return fmt.Errorf("-o %q: want wide, json or yaml", l.output)
			}
			ctx := cmd.Context()
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				out := cmd.OutOrStdout()
				if strings.Contains(args[0], "/") {
					v, err := readTemplate(ctx, bus, args[0], l.namespace)
					if err != nil {
						return err
					}
					if ok, err := printStructured(out, l.output, []readmodel.Template{v}); ok {
						return err
					}
					return printTemplate(out, v)
				}
				switch strings.ToLower(args[0]) {
				case "clusters", "cluster":
					return getClusters(ctx, out, bus, l)
				case "policies", "policy", "propagationpolicies", "propagationpolicy", "pp", "overridepolicies", "overridepolicy", "op",
					"clusterpropagationpolicies", "clusterpropagationpolicy", "cpp", "clusteroverridepolicies", "clusteroverridepolicy", "cop":
					return getPolicies(ctx, out, bus, l)
				case "work", "works":
					return getWork(ctx, out, bus, l)
				case "placements", "placement":
					return getPlacements(ctx, out, bus, l)
				case "deadletters", "deadletter":
					return getDeadLetters(ctx, out, cmd.ErrOrStderr(), bus, l)
				case "federatedresourcequotas", "federatedresourcequota", "frq":
					return getQuotas(ctx, out, bus, l)
				}
				return getTemplates(ctx, out, cmd.ErrOrStderr(), bus, l, args[0])
			})
		},
	}
	l.register(c)
	return c
}

// printStructured prints items as JSON or YAML; it reports whether it did.
func printStructured(out io.Writer, format string, items any) (bool, error) {
	if v := reflect.ValueOf(items); v.Kind() == reflect.Slice && v.IsNil() {
		items = []any{} // "items": [] as kubectl prints it, never null
	}
	switch format {
	case "json":
		b, err := json.MarshalIndent(map[string]any{"items": items}, "", "  ")
		if err != nil {
			return true, err
		}
		_, err = fmt.Fprintln(out, string(b))
		return true, err
	case "yaml":
		b, err := yaml.Marshal(map[string]any{"items": items})
		if err != nil {
			return true, err
		}
		_, err = out.Write(b)
		return true, err
	}
	return false, nil
}

func table(out io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(out, 0, 0, 3, ' ', 0) }

// now is the clock ages are measured against (tests fix it).
var now = time.Now

// age renders a duration the way kubectl does.
func age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	d := now().Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// readClusters reads the members with their health and capacity.
func readClusters(ctx context.Context, bus *natsbus.Bus) ([]readmodel.Cluster, error) {
	regs, err := latest(ctx, bus, events.StreamPolicy, events.AllMembers)
	if err != nil {
		return nil, err
	}
	hs, err := latest(ctx, bus, events.StreamHealth, events.AllHealth, events.AllCapacity)
	if err != nil {
		return nil, err
	}
	return readmodel.Clusters(regs, hs), nil
}

func getClusters(ctx context.Context, out io.Writer, bus *natsbus.Bus, l *listFlags) error {
	views, err := readClusters(ctx, bus)
	if err != nil {
		return err
	}
	return printClusters(out, l, views)
}

func printClusters(out io.Writer, l *listFlags, views []readmodel.Cluster) error {
	if ok, err := printStructured(out, l.output, views); ok {
		return err
	}
	w := table(out)
	fmt.Fprint(w, "NAME\tVERSION\tMODE\tREADY\tAGE")
	if l.output == "wide" {
		fmt.Fprint(w, "\tSTATE\tPROVIDER\tREGION\tNODES\tCPU(ALLOC/USED)\tMEMORY(ALLOC/USED)\tLABELS")
	}
	fmt.Fprintln(w)
	for _, v := range views {
		ready, state, version, nodes, cpu, mem := "Unknown", events.ClusterStateUnknown, "", "", "", ""
		if v.Health != nil {
			ready, state = map[bool]string{true: "True", false: "False"}[v.Health.Ready], v.Health.State
		}
		if c := v.Capacity; c != nil {
			version, nodes = c.KubernetesVersion, fmt.Sprintf("%d/%d", c.ReadyNodes, c.Nodes)
			cpu = fmt.Sprintf("%s/%s", c.Allocatable.Cpu(), c.Allocated.Cpu())
			mem = fmt.Sprintf("%s/%s", c.Allocatable.Memory(), c.Allocated.Memory())
		}
		mode := v.Registration.Spec.SyncMode
		if mode == "" {
			mode = "Push"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s", v.Registration.Name, version, mode, ready, age(v.JoinedAt))
		if l.output == "wide" {
			fmt.Fprintf(w, "\t%s\t%s\t%s\t%s\t%s\t%s\t%s", state, v.Registration.Spec.Provider, v.Registration.Spec.Region, nodes, cpu, mem, labelString(v.Registration.Labels))
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

func labelString(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return orNone(strings.Join(parts, ","))
}

// getTemplates lists the resource templates policyd accepted: every one
// ("templates") or those of one kind, as kubectl names kinds (deployments,
// deploy, svc, configmaps, ...).
func getTemplates(ctx context.Context, out, errw io.Writer, bus *natsbus.Bus, l *listFlags, what string) error {
	p, err := readPublished(ctx, bus)
	if err != nil {
		return err
	}
	return printTemplates(out, errw, l, p, what)
}

func printTemplates(out, errw io.Writer, l *listFlags, p readmodel.Published, what string) error {
	rows, matched, clusterScoped := readmodel.Templates(p, what)
	// A word with a group (widgets.example.com) names a kind whether or not
	// any template of it is left; a plain word must name a built-in kind
	// or the kind of an accepted template.
	_, _, grouped := strings.Cut(what, ".")
	all := strings.EqualFold(what, "templates") || strings.EqualFold(what, "template")
	known := all || grouped || matched
	if !known {
		for _, k := range validation.BuiltinKinds() {
			if readmodel.MatchesKind(what, events.ObjectKey{Kind: k}) {
				known, clusterScoped = true, validation.ClusterScopedKind(k)
				break
			}
		}
	}
	if !known {
		return fmt.Errorf("unknown resource %q: want clusters, policies, templates, a kind (deployments, services, ...), work, placements or deadletters", what)
	}
	items := selected(l, rows, func(r readmodel.TemplateRow) string { return r.Key.Namespace })
	if ok, err := printStructured(out, l.output, items); ok {
		return err
	}
	if len(items) == 0 {
		if l.all || clusterScoped {
			fmt.Fprintln(errw, "No resources found")
		} else {
			fmt.Fprintf(errw, "No resources found in %s namespace.\n", l.namespace)
		}
		return nil
	}
	w := table(out)
	cols := "NAME\tKIND\tGENERATION\tPOLICY\tAGE"
	if l.all {
		cols = "NAMESPACE\t" + cols
	}
	if l.output == "wide" {
		cols += "\tBINDING REVISION\tWARNINGS"
	}
	fmt.Fprintln(w, cols)
	for _, r := range items {
		policy := "<none>"
		if r.Policy != nil {
			policy = strings.ToLower(r.Policy.Kind) + "/" + r.Policy.Name
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s", r.Key.Name, r.Key.Kind, r.Generation, policy, age(r.UpdatedAt))
		if l.all {
			line = namespaceColumn(r.Key.Namespace) + "\t" + line
		}
		if l.output == "wide" {
			warnings, revision := "<none>", "<none>"
			if len(r.Warnings) > 0 {
				warnings = strings.Join(r.Warnings, "; ")
			}
			if r.BindingRevision > 0 {
				revision = strconv.FormatInt(r.BindingRevision, 10)
			}
			line += "\t" + revision + "\t" + warnings
		}
		fmt.Fprintln(w, line)
	}
	return w.Flush()
}

func getPolicies(ctx context.Context, out io.Writer, bus *natsbus.Bus, l *listFlags) error {
	p, err := readPublished(ctx, bus)
	if err != nil {
		return err
	}
	items := selected(l, readmodel.Policies(p), func(r events.ObjectRecord) string { return r.Key.Namespace })
	if ok, err := printStructured(out, l.output, items); ok {
		return err
	}
	w := table(out)
	fmt.Fprintln(w, "NAMESPACE\tNAME\tKIND\tGENERATION\tAGE")
	for _, r := range items {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", namespaceColumn(r.Key.Namespace), r.Key.Name, r.Key.Kind, r.Generation, age(r.UpdatedAt))
	}
	return w.Flush()
}

func getWork(ctx context.Context, out io.Writer, bus *natsbus.Bus, l *listFlags) error {
	_, work, err := readWork(ctx, bus)
	if err != nil {
		return err
	}
	return printWork(out, l, work.Filter(func(s events.WorkStatus) bool { return l.wants(s.Key.Namespace) }))
}

func printWork(out io.Writer, l *listFlags, work readmodel.Work) error {
	if ok, err := printStructured(out, l.output, work.Items); ok {
		return err
	}
	w := table(out)
	if l.all {
		fmt.Fprint(w, "NAMESPACE\t")
	}
	fmt.Fprint(w, "NAME\tCLUSTER\tSTATUS\tAGE")
	if l.output == "wide" {
		fmt.Fprint(w, "\tKIND\tREADY\tHEALTH\tGENERATION\tOVERRIDES\tMESSAGE")
	}
	fmt.Fprintln(w)
	for _, s := range work.Items {
		if l.all {
			fmt.Fprintf(w, "%s\t", s.Key.Namespace)
		}
		phase, msg := work.Phase(s)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s", s.Key.Name, s.Cluster, phase, age(s.CreatedAt))
		if l.output == "wide" {
			ready := "-"
			if s.Replicas > 0 {
				ready = fmt.Sprintf("%d/%d", s.ReadyReplicas, s.Replicas)
			}
			health := work.Health(s)
			if health == "" {
				health = "-"
			}
			fmt.Fprintf(w, "\t%s\t%s\t%s\t%d\t%s\t%s", s.Key.Kind, ready, health, s.Generation, strings.Join(s.AppliedOverrides, ","), msg)
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

// readTemplate reads the template ref (KIND/NAME or NAME) names in
// namespace, with its placement and work.
func readTemplate(ctx context.Context, bus *natsbus.Bus, ref, namespace string) (readmodel.Template, error) {
	decisions, work, err := readWork(ctx, bus)
	if err != nil {
		return readmodel.Template{}, err
	}
	return readmodel.FindTemplate(decisions, work, ref, namespace)
}

// printTemplate is `flotilla get KIND/NAME`: ready/desired per cluster and in total.
func printTemplate(out io.Writer, v readmodel.Template) error {
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
		phase, _ := v.Phase(s)
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%d\t%s\n", s.Cluster, s.ReadyReplicas, want, phase, s.Generation, age(s.CreatedAt))
	}
	fmt.Fprintf(w, "TOTAL\t%d\t%d\t\t\t\n", ready, desired)
	if err := w.Flush(); err != nil {
		return err
	}
	printAggregated(out, v)
	return nil
}

// printAggregated shows the status the template's statusAggregation
// script computed from its members (nothing without such a script).
func printAggregated(out io.Writer, v readmodel.Template) {
	if v.AggregationError != "" {
		fmt.Fprintf(out, "Status:       %s\n", v.AggregationError)
	}
	if v.AggregatedStatus != nil {
		raw, _ := events.MarshalJSON(v.AggregatedStatus)
		fmt.Fprintf(out, "Status:       %s\n", raw)
	}
}

func getPlacements(ctx context.Context, out io.Writer, bus *natsbus.Bus, l *listFlags) error {
	ms, err := latest(ctx, bus, events.StreamPlacement, events.AllPlacements)
	if err != nil {
		return err
	}
	return printPlacements(out, l, readmodel.Decisions(ms))
}

func printPlacements(out io.Writer, l *listFlags, decisions []events.PlacementDecision) error {
	items := selected(l, decisions, func(p events.PlacementDecision) string { return p.Key.Namespace })
	if ok, err := printStructured(out, l.output, items); ok {
		return err
	}
	w := table(out)
	printPlacementHeader(w, l)
	for _, p := range items {
		printPlacementRow(w, l, p)
	}
	return w.Flush()
}

func printPlacementHeader(w io.Writer, l *listFlags) {
	fmt.Fprint(w, "NAMESPACE\tNAME\tKIND\tSCHEDULED\tCLUSTERS\tAGE")
	if l.output == "wide" {
		fmt.Fprint(w, "\tSTRATEGY\tGENERATION\tEVICTED\tREASON")
	}
	fmt.Fprintln(w)
}

func printPlacementRow(w io.Writer, l *listFlags, p events.PlacementDecision) {
	var cs []string
	for _, c := range p.Clusters {
		cs = append(cs, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
	}
	clusters := orNone(strings.Join(cs, ","))
	fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%s\t%s", p.Key.Namespace, p.Key.Name, p.Key.Kind, p.Scheduled, clusters, age(p.DecidedAt))
	if l.output == "wide" {
		reason := p.Error
		if reason == "" {
			reason = p.Division
		}
		var evicted []string
		for _, e := range p.Evictions {
			state := "kept"
			if !e.Kept() {
				state = "purged"
			}
			evicted = append(evicted, e.Cluster+"("+e.Reason+","+state+")")
		}
		fmt.Fprintf(w, "\t%s\t%d\t%s\t%s", p.Strategy, p.Generation, orNone(strings.Join(evicted, ",")), reason)
	}
	fmt.Fprintln(w)
}
