package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newDescribe(g *globals) *cobra.Command {
	var namespace string
	c := &cobra.Command{
		Use:     "describe (cluster NAME | work NAME [-n NS])",
		Short:   "Show a member cluster (Ready, conditions, capacity, taints) or a template's work in every member",
		Example: "  flotilla describe cluster cluster1\n  flotilla describe work my-app -n default",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withBus(cmd.Context(), func(bus *natsbus.Bus) error {
				switch args[0] {
				case "cluster", "clusters":
					return describeCluster(cmd.Context(), cmd.OutOrStdout(), bus, args[1])
				case "work", "works":
					v, err := readTemplate(cmd.Context(), bus, args[1], namespace)
					if err != nil {
						return err
					}
					describeWork(cmd.OutOrStdout(), v)
					return nil
				}
				return fmt.Errorf("describe %s: want `describe cluster NAME` or `describe work NAME [-n NS]`", args[0])
			})
		},
	}
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of the work")
	return c
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

// describeWork is `flotilla describe work NAME`, like `kubectl describe work`.
func describeWork(out io.Writer, v readmodel.Template) {
	p := v.Placement
	fmt.Fprintf(out, "Name:         %s\nNamespace:    %s\nKind:         %s\nGeneration:   %d (binding revision %d)\nScheduled:    %t\n",
		p.Key.Name, p.Key.Namespace, p.Key.Kind, p.Generation, p.BindingRevision, p.Scheduled)
	if p.Error != "" {
		fmt.Fprintf(out, "Reason:       %s\n", p.Error)
	}
	printAggregated(out, v)
	fmt.Fprintln(out, "Work:")
	for _, s := range v.Work {
		phase, msg := v.Phase(s)
		fmt.Fprintf(out, "  Cluster:      %s\n    Status:     %s\n    Replicas:   %d ready of %d\n    Applied:    generation %d, observed generation %d\n",
			s.Cluster, phase, s.ReadyReplicas, s.Replicas, s.Generation, s.ObservedGeneration)
		if len(s.AppliedOverrides) > 0 {
			fmt.Fprintf(out, "    Overrides:  %s\n", strings.Join(s.AppliedOverrides, ", "))
		}
		if msg != "" {
			fmt.Fprintf(out, "    Message:    %s\n", msg)
		}
		if !s.UpdatedAt.IsZero() {
			fmt.Fprintf(out, "    Updated:    %s\n", s.UpdatedAt.Format(time.RFC3339))
		}
	}
}
