package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newDescribe(g *globals) *cobra.Command {
	var namespace string
	c := &cobra.Command{
		Use:   "describe TYPE [NAME...] | TYPE/NAME...",
		Short: "Show member clusters (Ready, conditions, capacity, taints), policies, or templates' work in every member",
		Example: "  flotilla describe cluster cluster1\n  flotilla describe clusters\n  flotilla describe work my-app -n default\n" +
			"  flotilla describe deployment/my-app\n  flotilla describe pp my-app-policy",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeResources(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				out := cmd.OutOrStdout()
				f, err := readFleet(ctx, bus)
				if err != nil {
					return err
				}
				targets, err := readmodel.ParseArgs(args, readmodel.Known(f.Published), true)
				if err != nil {
					return err
				}
				first := true
				sep := func() {
					if !first {
						fmt.Fprintln(out)
					}
					first = false
				}
				for _, t := range targets {
					switch t.Resource.View {
					case readmodel.ViewClusters:
						names := t.Names
						if len(names) == 0 {
							names = readmodel.MemberNames(f.Clusters)
						}
						for _, n := range names {
							sep()
							if err := printCluster(out, f.Clusters, n); err != nil {
								return err
							}
						}
					case readmodel.ViewPolicies:
						rs, err := recordsOf(f, t, &listFlags{namespace: namespace})
						if err != nil {
							return err
						}
						for _, r := range rs {
							sep()
							describePolicy(out, f, r)
						}
					case readmodel.ViewInstances, readmodel.ViewQuotas, readmodel.ViewDeadLetters:
						return fmt.Errorf("describe shows clusters, policies and templates, not %s: `flotilla get %s -o yaml` shows every field of them", t.Resource.Word, t.Resource.Word)
					default:
						if len(t.Names) == 0 {
							t.Names = readmodel.Names(f, t.Resource)
						}
						refs, err := templateRefsOf(f, []readmodel.Target{t}, namespace)
						if err != nil {
							return err
						}
						for _, ref := range refs {
							v, err := readmodel.FindTemplate(f.Decisions, f.Work, ref, namespace)
							if err != nil {
								return err
							}
							sep()
							describeWork(out, v, f)
						}
					}
				}
				if first { // nothing described, as kubectl says
					fmt.Fprintln(cmd.ErrOrStderr(), "No resources found")
				}
				return nil
			})
		},
	}
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace")
	return c
}

// describePolicy is `flotilla describe pp NAME`: the policy and the
// templates it claims now.
func describePolicy(out io.Writer, f readmodel.Fleet, r events.ObjectRecord) {
	w := table(out)
	fmt.Fprintf(w, "Name:\t%s\nNamespace:\t%s\nKind:\t%s\nGeneration:\t%d\nCreated:\t%s\n", r.Key.Name, orNone(r.Key.Namespace), r.Key.Kind, r.Generation,
		f.Published.Created(r.Key, r.UpdatedAt).UTC().Format(time.RFC3339))
	var claimed []string
	for _, t := range f.Published.SortedRecords() {
		if ref, _ := f.Published.ClaimingPolicy(t.Key); ref != nil && ref.Kind == r.Key.Kind && ref.Name == r.Key.Name && ref.Namespace == r.Key.Namespace {
			claimed = append(claimed, t.Key.Ref())
		}
	}
	fmt.Fprintf(w, "Claims:\t%s\n", orNone(strings.Join(claimed, ", ")))
	_ = w.Flush()
}

func describeCluster(ctx context.Context, out io.Writer, bus *natsbus.Bus, name string) error {
	views, err := readClusters(ctx, bus)
	if err != nil {
		return err
	}
	return printCluster(out, views, name)
}

// printCluster is `flotilla describe cluster NAME`, like `kubectl describe`.
func printCluster(out io.Writer, views []readmodel.Cluster, name string) error {
	for _, v := range views {
		if v.Registration.Name != name {
			continue
		}
		r := v.Registration
		w := table(out)
		fmt.Fprintf(w, "Name:\t%s\nLabels:\t%s\nAPI Endpoint:\t%s\nSync Mode:\t%s\nProvider:\t%s\nRegion:\t%s\nZones:\t%s\nJoined:\t%s\n",
			r.Name, labelString(r.Labels), r.Spec.APIEndpoint, r.Spec.SyncMode, orNone(r.Spec.Provider), orNone(r.Spec.Region), orNone(strings.Join(r.Spec.Zones, ",")),
			v.JoinedAt.UTC().Format(time.RFC3339))
		if h := v.Health; h != nil {
			fmt.Fprintf(w, "Ready:\t%s (%s since %s)\n", clusterReady(v), h.State, h.Since.UTC().Format(time.RFC3339))
		} else {
			fmt.Fprintln(w, "Ready:\tUnknown (healthd has not reported yet)")
		}
		if c := v.Capacity; c != nil {
			fmt.Fprintf(w, "Kubernetes:\t%s\nNodes:\t%d ready of %d\nAllocatable:\tcpu %s, memory %s, pods %s\nAllocated:\tcpu %s, memory %s, pods %s\n",
				c.KubernetesVersion, c.ReadyNodes, c.Nodes, c.Allocatable.Cpu(), c.Allocatable.Memory(), c.Allocatable.Pods(), c.Allocated.Cpu(), c.Allocated.Memory(), c.Allocated.Pods())
		}
		_ = w.Flush()
		if h := v.Health; h != nil {
			fmt.Fprintln(out, "Conditions:")
			w = table(out)
			fmt.Fprintln(w, "  TYPE\tSTATUS\tREASON\tMESSAGE\tLAST TRANSITION")
			for _, c := range h.Conditions {
				fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, orNone(c.Reason), orNone(c.Message), c.LastTransitionTime.UTC().Format(time.RFC3339))
			}
			_ = w.Flush()
			if len(h.Taints) > 0 {
				fmt.Fprintln(out, "Taints:")
				for _, t := range h.Taints {
					fmt.Fprintf(out, "  %s:%s\n", t.Key, t.Effect)
				}
			}
		}
		return nil
	}
	return notFound{fmt.Errorf("cluster %q not found", name)}
}

// describeWork is `flotilla describe work NAME`: the template's placement
// and its work in every member, one aligned row each, with the totals
// `get KIND/NAME` shows.
func describeWork(out io.Writer, v readmodel.Template, f readmodel.Fleet) {
	p := v.Placement
	w := table(out)
	fmt.Fprintf(w, "Name:\t%s\nNamespace:\t%s\nKind:\t%s\nGeneration:\t%d (binding revision %d)\nScheduled:\t%t\n",
		p.Key.Name, orNone(p.Key.Namespace), p.Key.Kind, p.Generation, p.BindingRevision, p.Scheduled)
	if ref, _ := f.Published.ClaimingPolicy(p.Key); ref != nil {
		fmt.Fprintf(w, "Policy:\t%s/%s\n", strings.ToLower(ref.Kind), ref.Name)
	}
	if !p.DecidedAt.IsZero() {
		fmt.Fprintf(w, "Decided:\t%s\n", p.DecidedAt.UTC().Format(time.RFC3339))
	}
	if p.Error != "" {
		fmt.Fprintf(w, "Reason:\t%s\n", p.Error)
	}
	ready, desired := v.ReadyOfAsked()
	fmt.Fprintf(w, "Replicas:\t%d ready of %d desired\n", ready, desired)
	_ = w.Flush()
	printAggregated(out, v)
	fmt.Fprintln(out, "Work:")
	w = table(out)
	fmt.Fprintln(w, "  CLUSTER\tSTATUS\tREADY\tDESIRED\tGENERATION\tOBSERVED\tOVERRIDES\tUPDATED\tMESSAGE")
	for _, s := range v.Work {
		phase, msg := v.Phase(s)
		updated := "-"
		if !s.UpdatedAt.IsZero() {
			updated = s.UpdatedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "  %s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", s.Cluster, phase, s.ReadyReplicas, v.Desired(s), s.Generation, s.ObservedGeneration,
			orNone(strings.Join(s.AppliedOverrides, ",")), updated, msg)
	}
	_ = w.Flush()
}

func labelString(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return orNone(strings.Join(parts, ","))
}
