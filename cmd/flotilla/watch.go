package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

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
			return g.withBus(cmd.Context(), func(bus *natsbus.Bus) error {
				out := cmd.OutOrStdout()
				// Rows arrive one at a time: fixed minimum widths keep the columns aligned.
				w := tabwriter.NewWriter(out, 14, 0, 2, ' ', 0)
				if l.output != "json" {
					printPlacementHeader(w, l)
					_ = w.Flush()
				}
				return bus.Watch(cmd.Context(), events.StreamPlacement, []string{events.AllPlacements}, true, func(m natsbus.Message) {
					p, ok := readmodel.Placement(storedMessage(m))
					if !ok || !l.wants(p.Key.Namespace) {
						return
					}
					if l.output == "json" {
						_, _ = printStructuredLine(out, p)
						return
					}
					printPlacementRow(w, l, p)
					_ = w.Flush()
				})
			})
		},
	}
	l.register(c)
	return c
}
