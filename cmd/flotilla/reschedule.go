package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

func newReschedule(g *globals) *cobra.Command {
	var namespace string
	c := &cobra.Command{
		Use:   "reschedule KIND/NAME [-n NS]",
		Short: "Place a template afresh (Karmada's rescheduleTriggeredAt / WorkloadRebalancer)",
		Long: `Ask for a fresh placement of a template. A Divided workload normally stays
where it runs when clusters join, recover or change (steady scheduling, as
Karmada); reschedule divides it again over the clusters that fit now, with
their free capacity plus what the template already runs as weights.`,
		Example: "  flotilla reschedule deployment/my-app -n default",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				t, err := resolveRef(ctx, bus, args[0], namespace)
				if err != nil {
					return err
				}
				k, e, err := t.request(events.TypeRescheduleRequested)
				if err != nil {
					return err
				}
				if err := bus.Publish(ctx, events.InputSubject(k), e); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s reschedule requested (follow with: flotilla watch placements)\n", label(t.kind, t.apiVersion, t.name))
				return nil
			})
		},
	}
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace")
	return c
}
