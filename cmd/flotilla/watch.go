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
	var namespace string
	var all bool
	var output string
	c := &cobra.Command{
		Use:     "watch placements",
		Short:   "Show the current placements, then every change as schedulerd decides it, with its time",
		Example: "  flotilla watch placements -A\n  flotilla watch placements -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "placements" && args[0] != "placement" {
				return fmt.Errorf("watch %s: only `watch placements` is supported (get -w watches any type)", args[0])
			}
			if output != "" && output != "json" {
				return fmt.Errorf("-o %q: watch prints a table or json", output)
			}
			asJSON := output == "json"
			l := listFlags{namespace: namespace, all: all, namespaceOnly: cmd.Flags().Changed("namespace")}
			wants := l.wantsBinding
			return g.withBus(cmd.Context(), func(bus *natsbus.Bus) error {
				out := cmd.OutOrStdout()
				ms, err := latest(cmd.Context(), bus, events.StreamPlacement, events.AllPlacements)
				if err != nil {
					return err
				}
				// Rows arrive one at a time: fixed minimum widths keep the columns aligned.
				w := tabwriter.NewWriter(out, 12, 0, 2, ' ', 0)
				row := func(when string, p events.PlacementDecision) {
					if asJSON {
						_, _ = printStructuredLine(out, p)
						return
					}
					cells := placementCells(p)
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", when, p.Key.Namespace, cells[0], cells[1], cells[2], cells[3], cells[8])
					_ = w.Flush()
				}
				if !asJSON {
					fmt.Fprintln(w, "TIME\tNAMESPACE\tNAME\tKIND\tSCHEDULED\tCLUSTERS\tREASON")
				}
				for _, p := range readmodel.Decisions(ms) {
					if wants(p.Key.Namespace) {
						row("current", p)
					}
				}
				return bus.Watch(cmd.Context(), events.StreamPlacement, []string{events.AllPlacements}, true, func(m natsbus.Message) {
					p, ok := readmodel.Placement(storedMessage(m))
					if ok && wants(p.Key.Namespace) {
						row(m.Time.Local().Format("15:04:05"), p)
					}
				})
			})
		},
	}
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace")
	c.Flags().BoolVarP(&all, "all-namespaces", "A", false, "all namespaces")
	c.Flags().StringVarP(&output, "output", "o", "", "json: one decision per line")
	return c
}
