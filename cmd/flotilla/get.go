package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/policyd/validation"
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

func newGet(g *globals) *cobra.Command {
	l := &listFlags{}
	c := &cobra.Command{
		Use:   "get clusters|policies|templates|KIND|work|placements|KIND/NAME",
		Short: "List member clusters, policies, templates, work or placements",
		Long: `List what Flotilla knows, read from the streams:
  clusters     member clusters: readiness and capacity (healthd)
  policies     propagation and override policies (policyd)
  templates    resource templates with the policy that claims each (policyd)
  KIND         the templates of one kind: deployments, services, cm, ... (policyd)
  work         one row per template and cluster: Pending, Applied, Progressing, Running, Failed, Deleting (executord)
  placements   where each template is placed and why (schedulerd)
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
			bus, err := g.connect(ctx)
			if err != nil {
				return err
			}
			defer bus.Close()
			out := cmd.OutOrStdout()
			if strings.Contains(args[0], "/") {
				v, err := loadTemplateView(ctx, bus, args[0], l.namespace)
				if err != nil {
					return err
				}
				if ok, err := printStructured(out, l.output, []templateView{v}); ok {
					return err
				}
				return printTemplateView(out, v)
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
			}
			return getTemplates(ctx, out, cmd.ErrOrStderr(), bus, l, args[0])
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

// age renders a duration the way kubectl does.
func age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	d := time.Since(t)
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

// clusterView joins a registration with its health and capacity.
type clusterView struct {
	Registration events.ClusterRegistration `json:"registration"`
	Health       *events.ClusterHealth      `json:"health,omitempty"`
	Capacity     *events.ClusterCapacity    `json:"capacity,omitempty"`
	JoinedAt     time.Time                  `json:"joinedAt"`
}

func clusterViews(ctx context.Context, bus *natsbus.Bus) ([]clusterView, error) {
	regs, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllMembers)
	if err != nil {
		return nil, err
	}
	byName := map[string]*clusterView{}
	var names []string
	for _, m := range regs {
		var r events.ClusterRegistration
		if m.Err != nil || events.Type(m.Event.Type()) != events.TypeClusterRegistered || events.Decode(m.Event, &r) != nil {
			continue
		}
		r.Credentials = nil
		byName[r.Name] = &clusterView{Registration: r, JoinedAt: m.Time}
		names = append(names, r.Name)
	}
	hs, err := bus.LatestPerSubject(ctx, events.StreamHealth, events.AllHealth, events.AllCapacity)
	if err != nil {
		return nil, err
	}
	for _, m := range hs {
		if m.Err != nil {
			continue
		}
		switch events.Type(m.Event.Type()) {
		case events.TypeClusterHealthChanged:
			var h events.ClusterHealth
			if events.Decode(m.Event, &h) == nil && byName[h.Cluster] != nil {
				byName[h.Cluster].Health = &h
			}
		case events.TypeClusterCapacityReported:
			var c events.ClusterCapacity
			if events.Decode(m.Event, &c) == nil && byName[c.Cluster] != nil {
				c.APIEnablements = nil
				byName[c.Cluster].Capacity = &c
			}
		}
	}
	sort.Strings(names)
	out := make([]clusterView, 0, len(names))
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out, nil
}

func getClusters(ctx context.Context, out io.Writer, bus *natsbus.Bus, l *listFlags) error {
	views, err := clusterViews(ctx, bus)
	if err != nil {
		return err
	}
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
		ready, state, version, nodes, cpu, mem := "Unknown", "Unknown", "", "", "", ""
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
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	if len(parts) == 0 {
		return "<none>"
	}
	return strings.Join(parts, ",")
}

// templateRow is one resource template as `flotilla get templates` lists it.
type templateRow struct {
	events.ObjectRecord
	// Policy claims the template (nil: none); BindingRevision counts its
	// binding's changes.
	Policy          *events.PolicyRef `json:"policy"`
	BindingRevision int64             `json:"bindingRevision,omitempty"`
}

// getTemplates lists the resource templates policyd accepted: every one
// ("templates") or those of one kind, as kubectl names kinds (deployments,
// deploy, svc, configmaps, ...).
func getTemplates(ctx context.Context, out, errw io.Writer, bus *natsbus.Bus, l *listFlags, what string) error {
	all := strings.EqualFold(what, "templates") || strings.EqualFold(what, "template")
	p, err := policyd.ReadPublished(ctx, bus)
	if err != nil {
		return err
	}
	// A word with a group (widgets.example.com) names a kind whether or not
	// any template of it is left; a plain word must name a built-in kind
	// or the kind of an accepted template.
	_, grouped := splitKindGroup(what)
	known, clusterScoped := all || grouped, false
	items := []templateRow{}
	for _, r := range p.SortedRecords() {
		if r.Role != events.RoleTemplate || (!all && !templateKindMatches(what, r.Key)) {
			continue
		}
		known, clusterScoped = true, r.Key.Namespace == ""
		if !l.wants(r.Key.Namespace) {
			continue
		}
		row := templateRow{ObjectRecord: r}
		if b, ok := p.Bindings[r.Key]; ok && p.Live[r.Key] && b.Policy != nil {
			// The policy that claimed it, while it exists: a template whose
			// policy was deleted keeps its placement (as in Karmada) but
			// no policy claims it.
			ref := events.ObjectKey{Group: "policy.karmada.io", Kind: b.Policy.Kind, Namespace: b.Policy.Namespace, Name: b.Policy.Name}
			if _, exists := p.Records[ref]; exists {
				row.Policy = b.Policy
			}
			row.BindingRevision = b.Revision
		}
		row.Object = nil // `flotilla get KIND/NAME -o yaml` and replay show the object
		items = append(items, row)
	}
	if !known {
		for _, k := range validation.BuiltinKinds() {
			if kindMatches(what, k) {
				known, clusterScoped = true, validation.ClusterScopedKind(k)
				break
			}
		}
	}
	if !known {
		return fmt.Errorf("unknown resource %q: want clusters, policies, templates, a kind (deployments, services, ...), work or placements", what)
	}
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
			ns := r.Key.Namespace
			if ns == "" {
				ns = "<cluster>"
			}
			line = ns + "\t" + line
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

// splitKindGroup splits "deployments.apps" into "deployments" and
// "apps"; grouped says whether a group was given.
func splitKindGroup(arg string) (kind string, grouped bool) {
	kind, _, grouped = strings.Cut(arg, ".")
	return kind, grouped
}

// templateKindMatches reports whether arg (a kind as kubectl takes it:
// deployments, deploy, deployments.apps, services.core) names key's kind,
// and its group when one is given.
func templateKindMatches(arg string, key events.ObjectKey) bool {
	kind, group, grouped := strings.Cut(arg, ".")
	if !kindMatches(kind, key.Kind) {
		return false
	}
	return !grouped || strings.EqualFold(group, key.Group) || (key.Group == "" && strings.EqualFold(group, "core"))
}

// objectRecords reads policyd's accepted objects (a claimed template's
// record is its latest binding's: policyd.ReadPublished).
func objectRecords(ctx context.Context, bus *natsbus.Bus) ([]events.ObjectRecord, error) {
	p, err := policyd.ReadPublished(ctx, bus)
	if err != nil {
		return nil, err
	}
	return p.SortedRecords(), nil
}

func getPolicies(ctx context.Context, out io.Writer, bus *natsbus.Bus, l *listFlags) error {
	recs, err := objectRecords(ctx, bus)
	if err != nil {
		return err
	}
	var items []events.ObjectRecord
	for _, r := range recs {
		if (r.Role == events.RolePolicy || r.Role == events.RoleOverride) && l.wants(r.Key.Namespace) {
			items = append(items, r)
		}
	}
	if ok, err := printStructured(out, l.output, items); ok {
		return err
	}
	w := table(out)
	fmt.Fprintln(w, "NAMESPACE\tNAME\tKIND\tGENERATION\tAGE")
	for _, r := range items {
		ns := r.Key.Namespace
		if ns == "" {
			ns = "<cluster>"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", ns, r.Key.Name, r.Key.Kind, r.Generation, age(r.UpdatedAt))
	}
	return w.Flush()
}

// workRow is one template in one member.
type workRow struct {
	events.WorkStatus
}

func getWork(ctx context.Context, out io.Writer, bus *natsbus.Bus, l *listFlags) error {
	ms, err := bus.LatestPerSubject(ctx, events.StreamWork, events.AllWork)
	if err != nil {
		return err
	}
	type workID struct {
		key     events.ObjectKey
		cluster string
	}
	reported := map[workID]events.WorkStatus{}
	for _, m := range ms {
		var s events.WorkStatus
		if m.Err != nil || events.Type(m.Event.Type()) != events.TypeWorkStatusChanged || events.Decode(m.Event, &s) != nil {
			continue
		}
		if l.wants(s.Key.Namespace) {
			reported[workID{s.Key, s.Cluster}] = s
		}
	}
	// Join with the placements: a placed cluster executord has not reported
	// on yet is Pending; a reported one the placement no longer lists is
	// Deleting until executord reports it gone.
	pls, err := placements(ctx, bus, l)
	if err != nil {
		return err
	}
	placed := map[workID]bool{}
	evicted := map[workID]events.Eviction{}
	var items []events.WorkStatus
	for _, p := range pls {
		for _, e := range p.Evictions {
			evicted[workID{p.Key, e.Cluster}] = e
		}
		for _, c := range p.Clusters {
			id := workID{p.Key, c.Name}
			placed[id] = true
			if _, ok := reported[id]; !ok {
				items = append(items, events.WorkStatus{Key: p.Key, Cluster: c.Name, Generation: p.Generation, Phase: events.WorkPending, Replicas: c.Replicas, CreatedAt: p.DecidedAt})
			}
		}
	}
	for id, s := range reported {
		if e, ok := evicted[id]; ok && !placed[id] && e.Kept() {
			s.Phase = "Evicted"
			s.Message = fmt.Sprintf("evicted (%s), copy kept (%s): %s", e.Reason, e.PurgeMode, e.Message)
		} else if !placed[id] {
			s.Phase = events.WorkDeleting
		}
		items = append(items, s)
	}
	// A member that cannot be reached cannot report: say so rather than
	// show its last report as current.
	lost := map[string]string{}
	if hs, err := bus.LatestPerSubject(ctx, events.StreamHealth, events.AllHealth); err == nil {
		for _, m := range hs {
			var h events.ClusterHealth
			if m.Err == nil && events.Decode(m.Event, &h) == nil && (h.State == "NotReady" || h.State == "Unreachable") {
				lost[h.Cluster] = fmt.Sprintf("%s since %s", h.State, h.Since.UTC().Format(time.RFC3339))
			}
		}
	}
	sort.Slice(items, func(i, j int) bool {
		if items[i].Key.String() != items[j].Key.String() {
			return items[i].Key.String() < items[j].Key.String()
		}
		return items[i].Cluster < items[j].Cluster
	})
	if ok, err := printStructured(out, l.output, items); ok {
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
	for _, s := range items {
		if l.all {
			fmt.Fprintf(w, "%s\t", s.Key.Namespace)
		}
		phase, msg := s.Phase, s.Message
		if why, ok := lost[s.Cluster]; ok && s.Phase != events.WorkDeleted {
			phase, msg = "Unknown", fmt.Sprintf("cluster %s; last reported %s", why, s.Phase)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s", s.Key.Name, s.Cluster, phase, age(s.CreatedAt))
		if l.output == "wide" {
			ready := "-"
			if s.Replicas > 0 {
				ready = fmt.Sprintf("%d/%d", s.ReadyReplicas, s.Replicas)
			}
			health := s.Health
			if health == "" {
				health = "-"
			}
			fmt.Fprintf(w, "\t%s\t%s\t%s\t%d\t%s\t%s", s.Key.Kind, ready, health, s.Generation, strings.Join(s.AppliedOverrides, ","), msg)
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

func placements(ctx context.Context, bus *natsbus.Bus, l *listFlags) ([]events.PlacementDecision, error) {
	ms, err := bus.LatestPerSubject(ctx, events.StreamPlacement, events.AllPlacements)
	if err != nil {
		return nil, err
	}
	var items []events.PlacementDecision
	for _, m := range ms {
		var p events.PlacementDecision
		if m.Err != nil || events.Type(m.Event.Type()) != events.TypePlacementDecided || events.Decode(m.Event, &p) != nil {
			continue
		}
		if l.wants(p.Key.Namespace) {
			p.Binding = nil
			items = append(items, p)
		}
	}
	return items, nil
}

func getPlacements(ctx context.Context, out io.Writer, bus *natsbus.Bus, l *listFlags) error {
	items, err := placements(ctx, bus, l)
	if err != nil {
		return err
	}
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
	clusters := strings.Join(cs, ",")
	if clusters == "" {
		clusters = "<none>"
	}
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
