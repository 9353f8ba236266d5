package main

import (
	"context"
	"fmt"
	"io"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// getDeadLetters is `flotilla get deadletters`: every dead letter stored,
// oldest first.
func getDeadLetters(ctx context.Context, out, errw io.Writer, bus *natsbus.Bus, l *listFlags) error {
	ms, err := bus.Replay(ctx, events.StreamDeadLetter, natsbus.ReplayOptions{})
	if err != nil {
		return err
	}
	return printDeadLetters(out, errw, l, readmodel.DeadLetters(stored(ms)))
}

// printDeadLetters prints dead letters as a table (with -o wide, where each
// came from and how often it was delivered) or as JSON or YAML.
func printDeadLetters(out, errw io.Writer, l *listFlags, items []readmodel.DeadLetter) error {
	if ok, err := printStructured(out, l.output, items); ok {
		return err
	}
	if len(items) == 0 {
		fmt.Fprintln(errw, "No resources found")
		return nil
	}
	w := table(out)
	fmt.Fprint(w, "CONSUMER\tSUBJECT\tREASON\tAGE")
	if l.output == "wide" {
		fmt.Fprint(w, "\tSTREAM\tSEQUENCE\tDELIVERIES")
	}
	fmt.Fprintln(w)
	for _, d := range items {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s", d.Consumer, d.Subject, d.Reason, age(d.At))
		if l.output == "wide" {
			fmt.Fprintf(w, "\t%s\t%d\t%d", d.Stream, d.Sequence, d.Deliveries)
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}
