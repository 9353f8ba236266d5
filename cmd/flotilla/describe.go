package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

func newDescribe(g *globals) *cobra.Command {
	var namespace string
	c := &cobra.Command{
		Use:     "describe (cluster NAME | work NAME [-n NS])",
		Short:   "Show a member cluster (Ready, conditions, capacity, taints) or a template's work in every member",
		Example: "  flotilla describe cluster cluster1\n  flotilla describe work my-app -n default",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			bus, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer bus.Close()
			switch args[0] {
			case "cluster", "clusters":
				return describeCluster(cmd.Context(), cmd.OutOrStdout(), bus, args[1])
			case "work", "works":
				v, err := loadTemplateView(cmd.Context(), bus, args[1], namespace)
				if err != nil {
					return err
				}
				describeWork(cmd.OutOrStdout(), v)
				return nil
			}
			return fmt.Errorf("describe %s: want `describe cluster NAME` or `describe work NAME [-n NS]`", args[0])
		},
	}
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of the work")
	return c
}

func describeCluster(ctx context.Context, out io.Writer, bus *natsbus.Bus, name string) error {
	views, err := clusterViews(ctx, bus)
	if err != nil {
		return err
	}
	for _, v := range views {
		if v.Registration.Name != name {
			continue
		}
		r := v.Registration
		fmt.Fprintf(out, "Name:          %s\nLabels:        %s\nAPI Endpoint:  %s\nSync Mode:     %s\nProvider:      %s\nRegion:        %s\nZones:         %v\nJoined:        %s\n",
			r.Name, labelString(r.Labels), r.Spec.APIEndpoint, r.Spec.SyncMode, r.Spec.Provider, r.Spec.Region, r.Spec.Zones, v.JoinedAt.Format(time.RFC3339))
		if h := v.Health; h != nil {
			fmt.Fprintf(out, "Ready:         %t (%s since %s)\nConditions:\n  TYPE   STATUS   REASON   MESSAGE\n", h.Ready, h.State, h.Since.Format(time.RFC3339))
			for _, c := range h.Conditions {
				fmt.Fprintf(out, "  %s   %s   %s   %s\n", c.Type, c.Status, c.Reason, c.Message)
			}
			if len(h.Taints) > 0 {
				fmt.Fprintln(out, "Taints:")
				for _, t := range h.Taints {
					fmt.Fprintf(out, "  %s:%s\n", t.Key, t.Effect)
				}
			}
		} else {
			fmt.Fprintln(out, "Ready:         Unknown (healthd has not reported yet)")
		}
		if c := v.Capacity; c != nil {
			fmt.Fprintf(out, "Kubernetes:    %s\nNodes:         %d ready of %d\nAllocatable:   cpu %s, memory %s, pods %s\nAllocated:     cpu %s, memory %s, pods %s\n",
				c.KubernetesVersion, c.ReadyNodes, c.Nodes, c.Allocatable.Cpu(), c.Allocatable.Memory(), c.Allocatable.Pods(), c.Allocated.Cpu(), c.Allocated.Memory(), c.Allocated.Pods())
		}
		return nil
	}
	return exitError{printErr(fmt.Sprintf("cluster %q not found", name))}
}

func printErr(msg string) error {
	fmt.Fprintln(os.Stderr, "error:", msg)
	return errors.New(msg)
}

func newWatch(g *globals) *cobra.Command {
	l := &listFlags{}
	c := &cobra.Command{
		Use:     "watch placements",
		Short:   "Stream placements as schedulerd decides them",
		Example: "  flotilla watch placements -A\n  flotilla watch placements -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "placements" && args[0] != "placement" {
				return fmt.Errorf("watch %s: only `watch placements` is supported", args[0])
			}
			bus, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer bus.Close()
			out := cmd.OutOrStdout()
			// Rows arrive one at a time: fixed minimum widths keep the columns aligned.
			w := tabwriter.NewWriter(out, 14, 0, 2, ' ', 0)
			if l.output != "json" {
				printPlacementHeader(w, l)
				_ = w.Flush()
			}
			return bus.Watch(cmd.Context(), events.StreamPlacement, []string{events.AllPlacements}, true, func(m natsbus.Message) {
				var p events.PlacementDecision
				if m.Err != nil || events.Decode(m.Event, &p) != nil || !l.wants(p.Key.Namespace) {
					return
				}
				p.Binding = nil
				if l.output == "json" {
					_, _ = printStructuredLine(out, p)
					return
				}
				printPlacementRow(w, l, p)
				_ = w.Flush()
			})
		},
	}
	l.register(c)
	return c
}
