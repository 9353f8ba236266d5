package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
)

func printStructuredLine(out io.Writer, v any) (int, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, err
	}
	return fmt.Fprintln(out, string(b))
}

func newReplay(g *globals) *cobra.Command {
	var since time.Duration
	var fromSeq uint64
	var subjects []string
	var stream, output string
	var wide bool
	c := &cobra.Command{
		Use:   "replay (--since DURATION | --from-seq N) [--subject S]... [--stream NAME]",
		Short: "Print the recorded event history, for audit",
		Long: `Print what was recorded on the bus: every applied object, decision,
placement, status change and dead letter, oldest first. --from-seq counts
within one stream (give --stream). Without --stream all streams are merged by time.
--subject may be given several times: events on any of them are printed.
SUMMARY says in one line what each event is; --wide adds the CAUSATION
column (the id of the event that caused it) and prints every SUMMARY whole
(else it is cut at 160 characters).`,
		Example: "  flotilla replay --since 1h\n  flotilla replay --since 10m --subject 'flotilla.placement.>'\n  flotilla replay --since 10m --subject 'flotilla.object.>' --subject 'flotilla.binding.>'\n  flotilla replay --stream FLOTILLA_PLACEMENT --from-seq 1 -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkReplayFlags(since, fromSeq, stream, output, subjects); err != nil {
				return err
			}
			return g.withBus(cmd.Context(), func(bus *natsbus.Bus) error {
				opts := natsbus.ReplayOptions{FromSeq: fromSeq}
				if since > 0 {
					opts.Since = time.Now().Add(-since)
				}
				var all []natsbus.Message
				for _, s := range events.Streams {
					if stream != "" && !strings.EqualFold(stream, s.Name) {
						continue
					}
					// One read per subject (filters of one consumer may not
					// overlap), merged without repeats.
					filters := [][]string{nil}
					if len(subjects) > 0 {
						filters = nil
						for _, subj := range subjects {
							if streamCovers(s, subj) {
								filters = append(filters, []string{subj})
							}
						}
					}
					seen := map[uint64]bool{}
					for _, f := range filters {
						opts.Subjects = f
						ms, err := bus.Replay(cmd.Context(), s.Name, opts)
						if err != nil {
							return fmt.Errorf("%s: %w", s.Name, err)
						}
						for _, m := range ms {
							if !seen[m.Sequence] {
								seen[m.Sequence] = true
								all = append(all, m)
							}
						}
					}
				}
				natsbus.SortByTime(all)
				out := cmd.OutOrStdout()
				if output == "json" {
					for _, m := range all {
						if m.Err != nil {
							_, _ = printStructuredLine(out, map[string]any{"stream": m.Stream, "seq": m.Sequence, "subject": m.Subject, "error": m.Err.Error()})
							continue
						}
						_, _ = printStructuredLine(out, map[string]any{"stream": m.Stream, "seq": m.Sequence, "subject": m.Subject, "event": readableEvent(m.Event)})
					}
					return nil
				}
				w := table(out)
				if wide {
					fmt.Fprintln(w, "TIME\tSTREAM\tSEQ\tTYPE\tSUBJECT\tCAUSATION\tSUMMARY")
				} else {
					fmt.Fprintln(w, "TIME\tSTREAM\tSEQ\tTYPE\tSUBJECT\tSUMMARY")
				}
				for _, m := range all {
					typ, causation, summary := "<not a CloudEvent>", "", ""
					if m.Err != nil {
						summary = m.Err.Error()
					} else {
						typ, causation, summary = m.Event.Type(), events.CausationID(m.Event), summarize(m.Event)
					}
					if r := []rune(summary); !wide && len(r) > summaryWidth {
						summary = string(r[:summaryWidth-1]) + "…"
					}
					if wide {
						summary = causation + "\t" + summary
					}
					fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", m.Time.Format("2006-01-02T15:04:05.000Z07:00"), m.Stream, m.Sequence, typ, m.Subject, summary)
				}
				return w.Flush()
			})
		},
	}
	c.Flags().DurationVar(&since, "since", 0, "only events newer than this (e.g. 1h, 30m)")
	c.Flags().Uint64Var(&fromSeq, "from-seq", 0, "start at this sequence of --stream")
	c.Flags().StringArrayVar(&subjects, "subject", nil, "only this NATS subject (wildcards allowed: flotilla.placement.>); repeat for several")
	c.Flags().StringVar(&stream, "stream", "", "only this stream (FLOTILLA_INPUT, FLOTILLA_POLICY, FLOTILLA_HEALTH, FLOTILLA_PLACEMENT, FLOTILLA_WORK, FLOTILLA_DEADLETTER)")
	c.Flags().StringVarP(&output, "output", "o", "", "json: one JSON object per event (default: a table)")
	c.Flags().BoolVar(&wide, "wide", false, "add CAUSATION and print every SUMMARY whole")
	return c
}

// checkReplayFlags refuses what replay cannot honour, before it reads
// anything: an output format it does not print, a stream there is not, a
// subject NATS would not take as a filter, a negative --since.
func checkReplayFlags(since time.Duration, fromSeq uint64, stream, output string, subjects []string) error {
	if output != "" && output != "json" {
		return fmt.Errorf("-o %s: unknown output format: replay prints a table, or with -o json one JSON object per event", output)
	}
	if since < 0 {
		return fmt.Errorf("--since %s: must not be negative (it counts back from now)", since)
	}
	if stream != "" && !slices.ContainsFunc(events.Streams, func(s events.StreamSpec) bool { return strings.EqualFold(stream, s.Name) }) {
		names := make([]string, 0, len(events.Streams))
		for _, s := range events.Streams {
			names = append(names, s.Name)
		}
		return fmt.Errorf("no stream %s (streams: %s)", stream, strings.Join(names, ", "))
	}
	if fromSeq > 0 && stream == "" {
		return fmt.Errorf("--from-seq needs --stream (sequence numbers are per stream)")
	}
	for _, subj := range subjects {
		if !natsbus.ValidSubjectFilter(subj) {
			return fmt.Errorf("--subject %q: not a NATS subject: dot-separated tokens, none empty or with spaces, and > only as the last token", subj)
		}
	}
	return nil
}

// summaryWidth is where replay cuts a SUMMARY without --wide.
const summaryWidth = 160

// streamCovers reports whether subject can match one of the stream's subjects.
func streamCovers(s events.StreamSpec, subject string) bool {
	for _, p := range s.Subjects {
		prefix := strings.TrimSuffix(p, ">")
		if strings.HasPrefix(subject, prefix) || strings.HasPrefix(prefix, strings.TrimSuffix(subject, ">")) || subject == p {
			return true
		}
	}
	return false
}

func targetList(cs []events.TargetCluster) string {
	if len(cs) == 0 {
		return "<none>"
	}
	return events.FormatTargets(cs)
}

// readableEvent is a CloudEvent in structured JSON with its data as JSON
// (an event read back from the bus would otherwise print data_base64).
func readableEvent(e events.Event) map[string]any {
	out := map[string]any{"specversion": e.SpecVersion(), "id": e.ID(), "source": e.Source(), "type": e.Type(),
		"subject": e.Subject(), "datacontenttype": e.DataContentType(), "time": e.Time()}
	for k, v := range e.Extensions() {
		out[k] = v
	}
	if d := e.Data(); json.Valid(d) {
		out["data"] = json.RawMessage(d)
	} else if d != nil {
		out["data_base64"] = d
	}
	return out
}
