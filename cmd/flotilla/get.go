package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// listFlags are kubectl's selection flags: -n, -A and -l.
type listFlags struct {
	namespace string
	// namespaceOnly: -n was given, so a list of bindings (work,
	// placements) leaves the cluster-scoped ones out, as kubectl get rb -n
	// lists no ClusterResourceBinding.
	namespaceOnly bool
	all           bool
	selector      string
	printFlags
}

func (l *listFlags) register(c *cobra.Command) {
	c.Flags().StringVarP(&l.namespace, "namespace", "n", "default", "namespace")
	c.Flags().BoolVarP(&l.all, "all-namespaces", "A", false, "all namespaces")
	c.Flags().StringVarP(&l.selector, "selector", "l", "", "label selector (e.g. app=web,tier!=db)")
	l.printFlags.register(c)
}

func (l *listFlags) wants(ns string) bool { return l.all || ns == "" || ns == l.namespace }

// wantsBinding: a binding (work, placements) in namespace ns ("" for a
// cluster-scoped template's) is listed: with -n given, only that
// namespace's, as kubectl get rb -n lists no ClusterResourceBinding.
func (l *listFlags) wantsBinding(ns string) bool {
	return l.wants(ns) && !(ns == "" && l.namespaceOnly && !l.all)
}

func newGet(g *globals) *cobra.Command {
	l := &listFlags{}
	var watch bool
	c := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME...",
		Short: "List member clusters, policies, templates, work, placements or dead letters",
		Long: `List what Flotilla knows, read from the streams, in kubectl's argument forms
(TYPE, TYPE NAME..., TYPE/NAME..., TYPE1,TYPE2):
  clusters     member clusters: readiness and capacity (healthd)
  policies     every propagation and override policy; pp, cpp, op, cop one kind (policyd)
  templates    resource templates with the policy that claims each (policyd)
  KIND         the templates of one kind: deployments, deploy, svc, cm, ... (policyd)
  work         one row per template and cluster: Pending, Applied, Progressing, Running,
               Failed, Evicted, Deleting, Unknown (executord)
  placements   where each template is placed and why (schedulerd)
  frq          federatedresourcequotas: each quota's overall limits and overallUsed,
               counted from the placements
  deadletters  events a consumer gave up on, with the reason (every daemon)
  instances    every running daemon instance: version, the partitions or clusters it
               owns, last heartbeat, NATS node; work no instance owns as <none>
A template named with its kind (deployment/my-app) shows ready/desired replicas per
cluster and in total. -o json|yaml print Kubernetes objects (a List): templates with
their aggregated status, policies, clusters as cluster.karmada.io Cluster, work and
placements as work.karmada.io ResourceBinding; ` + "`apply -f -`" + ` and ` + "`simulate -f -`" + ` read them back.`,
		Example: "  flotilla get deployment/my-app\n  flotilla get deploy,svc -A\n  flotilla get cluster cluster1 -o yaml\n  flotilla get pp -o name\n" +
			"  flotilla get deploy my-app -o jsonpath='{.spec.replicas}'\n  flotilla get work -l app=web -o wide\n  flotilla get clusters -o yaml | flotilla simulate -f - -f app.yaml",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeResources(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := l.check(); err != nil {
				return err
			}
			l.namespaceOnly = cmd.Flags().Changed("namespace")
			sel, err := labels.Parse(l.selector)
			if err != nil {
				return fmt.Errorf("-l %q: %w", l.selector, err)
			}
			ctx := cmd.Context()
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
				var changed <-chan struct{}
				if watch {
					var err error
					if changed, err = followChanges(ctx, bus); err != nil {
						return err
					}
				}
				f, err := readFleet(ctx, bus)
				if err != nil {
					return err
				}
				targets, err := readmodel.ParseArgs(args, readmodel.Known(f.Published), false)
				if err != nil {
					return err
				}
				if err := printGet(ctx, out, errw, bus, f, targets, l, sel); err != nil || !watch {
					return err
				}
				return watchGet(ctx, out, errw, bus, f, changed, targets, l, sel)
			})
		},
	}
	l.register(c)
	c.Flags().BoolVarP(&watch, "watch", "w", false, "after listing, print each row again as it changes, and as it last was when its object is deleted")
	return c
}

// readFleet reads every view's streams once: the accepted objects, the
// placements, the work and the members.
func readFleet(ctx context.Context, bus *natsbus.Bus) (readmodel.Fleet, error) {
	return readmodel.ReadFleet(ctx, latestReader(bus))
}

// printGet prints what targets name: every object in one List for the
// object formats, else one table per target.
func printGet(ctx context.Context, out, errw io.Writer, bus *natsbus.Bus, f readmodel.Fleet, targets []readmodel.Target, l *listFlags, sel labels.Selector) error {
	var views []view
	var missing []error
	named := false
	for _, t := range targets {
		v, err := buildView(ctx, bus, f, t, l, sel)
		if err != nil {
			var nf notFound
			if !errors.As(err, &nf) {
				return err
			}
			missing = append(missing, err)
		}
		named = named || len(t.Names) > 0
		views = append(views, v)
	}
	var objs []*unstructured.Unstructured
	for _, v := range views {
		for _, r := range v.rows {
			objs = append(objs, r.obj)
		}
	}
	var err error
	switch {
	case l.objects():
		err = printObjects(out, &l.printFlags, objs, named && len(targets) == 1 && len(targets[0].Names) == 1)
	case strings.HasPrefix(l.output, "custom-columns="):
		t, cerr := customColumns(strings.TrimPrefix(l.output, "custom-columns="), objs)
		if cerr != nil {
			return cerr
		}
		err = printTable(out, &l.printFlags, false, t)
	default:
		err = printViews(out, errw, f, targets, views, l)
	}
	if err != nil {
		return err
	}
	return errors.Join(missing...)
}

// printViews prints one table per target, a blank line between them; a
// template named with its kind shows its replicas per cluster instead.
func printViews(out, errw io.Writer, f readmodel.Fleet, targets []readmodel.Target, views []view, l *listFlags) error {
	printed := false
	for i, v := range views {
		t := targets[i]
		if len(v.rows) == 0 {
			if len(t.Names) == 0 && v.empty != "" && len(views) == 1 {
				fmt.Fprintln(errw, v.empty)
			}
			continue
		}
		if printed {
			fmt.Fprintln(out)
		}
		printed = true
		if t.Resource.View == readmodel.ViewTemplates && len(t.Names) > 0 && l.output == "" {
			for j, r := range v.rows {
				if j > 0 {
					fmt.Fprintln(out)
				}
				key := events.KeyOf(r.obj.GetAPIVersion(), r.obj.GetKind(), r.obj.GetNamespace(), r.obj.GetName())
				if err := printTemplate(out, f.Template(key)); err != nil {
					return err
				}
			}
			continue
		}
		tbl := tableOf(v.columns...)
		for _, r := range v.rows {
			for _, cells := range r.cells {
				addRow(tbl, r.obj, cells...)
			}
		}
		if err := printTable(out, &l.printFlags, l.all && v.namespaced, tbl); err != nil {
			return err
		}
	}
	return nil
}

// notFound: a name the arguments gave names nothing; the others are
// printed and the command exits 1, as kubectl does.
type notFound struct{ error }

// buildView computes the rows of one target: its objects, in the
// namespaces and with the labels l selects, and the names t gives.
func buildView(ctx context.Context, bus *natsbus.Bus, f readmodel.Fleet, t readmodel.Target, l *listFlags, sel labels.Selector) (view, error) {
	v := view{namespaced: true}
	// Work and placements are selected by their template's labels, below.
	bindingView := t.Resource.View == readmodel.ViewWork || t.Resource.View == readmodel.ViewPlacements
	keep := func(obj *unstructured.Unstructured) bool {
		if bindingView {
			return l.wantsBinding(obj.GetNamespace())
		}
		return l.wants(obj.GetNamespace()) && sel.Matches(labels.Set(obj.GetLabels()))
	}
	add := func(obj any, cells ...[]any) error {
		u, err := unstructuredOf(obj)
		if err != nil {
			return err
		}
		if keep(u) {
			v.rows = append(v.rows, row{u, cells})
		}
		return nil
	}
	emptyIn := "No resources found in " + l.namespace + " namespace."
	if l.all || t.Resource.ClusterScoped {
		emptyIn = "No resources found"
	}
	switch t.Resource.View {
	case readmodel.ViewClusters:
		v.columns, v.namespaced, v.empty = clusterColumns, false, "No resources found"
		for _, c := range f.Clusters {
			if len(t.Names) == 0 || slices.Contains(t.Names, c.Registration.Name) {
				if err := add(readmodel.ClusterObject(c), clusterCells(c)); err != nil {
					return v, err
				}
			}
		}
		for _, n := range t.Names {
			if !hasCluster(f.Clusters, n) {
				return v, notFound{fmt.Errorf("cluster %q not found", n)}
			}
		}
	case readmodel.ViewTemplates, readmodel.ViewPolicies:
		v.columns, v.empty = templateColumns, emptyIn
		if t.Resource.View == readmodel.ViewPolicies {
			v.columns = policyColumns
		}
		records, missing := recordsOf(f, t, l)
		var nf notFound
		if missing != nil && !errors.As(missing, &nf) {
			return v, missing
		}
		for _, r := range records {
			cells := policyCells(f, r)
			if r.Role == events.RoleTemplate {
				cells = templateCells(f, r)
			}
			if err := add(f.RecordObject(r), cells); err != nil {
				return v, err
			}
		}
		if missing != nil {
			return v, missing
		}
	case readmodel.ViewWork, readmodel.ViewPlacements:
		v.columns, v.empty = workColumns, emptyIn
		if t.Resource.View == readmodel.ViewPlacements {
			v.columns = placementColumns
		}
		for _, key := range f.Keys() {
			if len(t.Names) > 0 && !slices.ContainsFunc(t.Names, func(n string) bool { return namesTemplate(n, key) }) {
				continue
			}
			tv := f.Template(key)
			var cells [][]any
			if t.Resource.View == readmodel.ViewWork {
				for _, s := range tv.Work {
					cells = append(cells, workCells(tv, f.Work, s))
				}
			} else if !tv.Placement.DecidedAt.IsZero() || len(tv.Placement.Clusters) > 0 {
				cells = [][]any{placementCells(tv.Placement)}
			}
			if len(cells) == 0 {
				continue
			}
			// -l selects by the template's labels: the binding has
			// none of its own, so `get work -l app=web` matched nothing.
			if !sel.Empty() && !sel.Matches(labels.Set(templateLabels(f, key))) {
				continue
			}
			if err := add(f.BindingObject(tv), cells...); err != nil {
				return v, err
			}
		}
		for _, n := range t.Names {
			if !slices.ContainsFunc(v.rows, func(r row) bool { return namesTemplate(n, keyOf(r.obj)) }) {
				return v, notFound{fmt.Errorf("no placed template named %q in namespace %s (flotilla get placements -A lists them)", n, l.namespace)}
			}
		}
	case readmodel.ViewQuotas:
		v.columns, v.empty = quotaColumns, emptyIn
		ms, err := latest(ctx, bus, events.StreamPlacement, events.AllPlacements)
		if err != nil {
			return v, err
		}
		for _, q := range readmodel.Quotas(f.Published, ms) {
			if len(t.Names) == 0 || slices.Contains(t.Names, q.Name) {
				if err := add(quotaObject(f, q), quotaCells(f, q)); err != nil {
					return v, err
				}
			}
		}
	case readmodel.ViewInstances:
		v.columns, v.namespaced, v.empty = instanceColumns, false, "No instances running"
		regs, leases, n, err := bus.Instances(ctx)
		if err != nil {
			return v, err
		}
		clusters, err := readClusters(ctx, bus)
		if err != nil {
			return v, err
		}
		for _, r := range readmodel.Instances(regs, leases, sharedWork(n, clusters)) {
			obj := readmodel.InstanceObject(r)
			name, _ := obj["metadata"].(map[string]any)["name"].(string)
			if len(t.Names) == 0 || slices.Contains(t.Names, name) || slices.Contains(t.Names, r.Instance) {
				if err := add(obj, instanceCells(r)); err != nil {
					return v, err
				}
			}
		}
	case readmodel.ViewDeadLetters:
		v.columns, v.namespaced, v.empty = deadLetterCols, false, "No resources found"
		ms, err := bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
		if err != nil {
			return v, err
		}
		for _, d := range readmodel.DeadLetters(stored(ms)) {
			obj := readmodel.DeadLetterObject(d)
			name, _ := obj["metadata"].(map[string]any)["name"].(string)
			if len(t.Names) == 0 || slices.Contains(t.Names, name) {
				if err := add(obj, deadLetterCells(name, d)); err != nil {
					return v, err
				}
			}
		}
	}
	return v, nil
}

// recordsOf returns the templates or policies t names (all of its type
// when it names none) that l selects.
func recordsOf(f readmodel.Fleet, t readmodel.Target, l *listFlags) ([]events.ObjectRecord, error) {
	if len(t.Names) > 0 {
		// Name by name: those found are listed, and the first name not
		// found is the error after them, as kubectl does (get deploy
		// my-app nosuch listed nothing).
		var out []events.ObjectRecord
		var first error
		for _, name := range t.Names {
			one := t
			one.Names = []string{name}
			rs, err := readmodel.ResolveRecords(f.Published, one, l.namespace, l.all)
			var amb *readmodel.AmbiguousError
			switch {
			case err != nil && errors.As(err, &amb):
				return nil, err
			case err != nil && first == nil:
				first = notFound{err}
			}
			out = append(out, rs...)
		}
		return out, first
	}
	var out []events.ObjectRecord
	for _, r := range f.Published.SortedRecords() {
		isPolicy := r.Role == events.RolePolicy || r.Role == events.RoleOverride
		if (isPolicy == (t.Resource.View == readmodel.ViewPolicies)) && (isPolicy || r.Role == events.RoleTemplate) && t.Resource.Matches(r.Key) {
			out = append(out, r)
		}
	}
	return out, nil
}

// namesTemplate reports whether n, a name given to work or placements
// (NAME, or the template as KIND/NAME), names the template at key.
func namesTemplate(n string, key events.ObjectKey) bool {
	if kind, name, ok := strings.Cut(n, "/"); ok {
		return name == key.Name && readmodel.MatchesKind(kind, key)
	}
	return n == key.Name
}

// keyOf is the template key a ResourceBinding object binds.
func keyOf(obj *unstructured.Unstructured) events.ObjectKey {
	r, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "resource")
	return events.KeyOf(r["apiVersion"], r["kind"], r["namespace"], r["name"])
}

func hasCluster(cs []readmodel.Cluster, name string) bool {
	for _, c := range cs {
		if c.Registration.Name == name {
			return true
		}
	}
	return false
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

// readTemplate reads the template ref (KIND/NAME or NAME) names in
// namespace, with its placement and work.
func readTemplate(ctx context.Context, bus *natsbus.Bus, ref, namespace string) (readmodel.Template, error) {
	decisions, work, err := readWork(ctx, bus)
	if err != nil {
		return readmodel.Template{}, err
	}
	return readmodel.FindTemplate(decisions, work, ref, namespace)
}

// printTemplate is `flotilla get KIND/NAME`: ready/desired per cluster and
// in total (readmodel.Template.Totals: a kept evicted copy is shown, as
// Evicted, but desires nothing).
func printTemplate(out io.Writer, v readmodel.Template) error {
	w := table(out)
	fmt.Fprintf(w, "%s\n", v.Placement.Key.Ref())
	fmt.Fprintln(w, "CLUSTER\tREADY\tDESIRED\tSTATUS\tGENERATION\tAGE")
	for _, s := range v.Work {
		phase, _ := v.Phase(s)
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%d\t%s\n", s.Cluster, s.ReadyReplicas, v.Desired(s), phase, s.Generation, age(s.CreatedAt))
	}
	ready, desired := v.Totals()
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

// templateLabels are the labels of the template key names, as accepted.
func templateLabels(f readmodel.Fleet, key events.ObjectKey) map[string]string {
	r, ok := f.Published.Records[key]
	if !ok {
		return nil
	}
	u, err := unstructuredOf(readmodel.AppliedObject(r))
	if err != nil {
		return nil
	}
	return u.GetLabels()
}
