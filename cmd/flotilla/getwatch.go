package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// watchedStreams are the streams whose events change the views.
var watchedStreams = []struct {
	stream  string
	filters []string
}{
	{events.StreamPolicy, []string{events.AllObjects, events.AllBindings, events.AllMembers}},
	{events.StreamPlacement, []string{events.AllPlacements}},
	{events.StreamWork, []string{events.AllWork}},
	{events.StreamHealth, []string{events.AllHealth, events.AllCapacity}},
}

// followChanges subscribes to every stream whose events change the views
// and signals on the returned channel when one arrives. `get -w` calls it
// before it reads what it lists, so that no change slips between the
// listing and the watch.
func followChanges(ctx context.Context, bus *natsbus.Bus) (<-chan struct{}, error) {
	changed := make(chan struct{}, 1)
	for _, s := range watchedStreams {
		sub, err := bus.Subscribe(ctx, s.stream, s.filters, true)
		if err != nil {
			return nil, err
		}
		go func() {
			_ = sub.Run(func(natsbus.Message) {
				select {
				case changed <- struct{}{}:
				default:
				}
			})
		}()
	}
	return changed, nil
}

// watchGet is `get -w`: after the listing (of fleet f, read after
// followChanges subscribed), every row that changes is printed again, as
// kubectl's watch does, and a row that is gone once more, as it last
// was, until interrupted. A burst of events is printed
// once, settled.
func watchGet(ctx context.Context, out, errw io.Writer, bus *natsbus.Bus, f readmodel.Fleet, changed <-chan struct{}, targets []readmodel.Target, l *listFlags, sel labels.Selector) error {
	last := rowsOf(ctx, bus, f, targets, l, sel) // what the listing printed
	quiet := *l
	quiet.noHeaders = true
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		time.Sleep(200 * time.Millisecond) // let the burst settle
		f, err := readFleet(ctx, bus)
		if err != nil {
			fmt.Fprintln(errw, "Warning:", err)
			continue
		}
		rows := rowsOf(ctx, bus, f, targets, l, sel)
		for _, k := range rows.order {
			if last.lines[k] != rows.lines[k] {
				printWatched(out, rows, k, l, &quiet)
			}
		}
		// A row that is gone is printed once more, as it last was: what
		// kubectl's watch prints for a deletion.
		for _, k := range last.order {
			if _, ok := rows.lines[k]; !ok {
				printWatched(out, last, k, l, &quiet)
			}
		}
		last = rows
	}
}

// printWatched prints row k of rows, as the listing printed it.
func printWatched(out io.Writer, rows watchRows, k string, l, quiet *listFlags) {
	if l.objects() {
		_ = printObjects(out, &quiet.printFlags, []*unstructured.Unstructured{rows.objs[k]}, true)
		return
	}
	fmt.Fprint(out, rows.lines[k])
}

// watchRows are the rows of a listing, by object and row, as printed.
type watchRows struct {
	order []string
	lines map[string]string
	objs  map[string]*unstructured.Unstructured
}

// rowsOf are the rows of fleet f as the listing prints them.
func rowsOf(ctx context.Context, bus *natsbus.Bus, f readmodel.Fleet, targets []readmodel.Target, l *listFlags, sel labels.Selector) watchRows {
	out := watchRows{lines: map[string]string{}, objs: map[string]*unstructured.Unstructured{}}
	quiet := *l
	quiet.noHeaders = true
	for _, t := range targets {
		v, err := buildView(ctx, bus, f, t, l, sel)
		if err != nil {
			continue
		}
		for _, r := range v.rows {
			for i, cells := range r.cells {
				key := fmt.Sprintf("%s/%s/%s/%d", r.obj.GetKind(), r.obj.GetNamespace(), r.obj.GetName(), i)
				tbl := tableOf(v.columns...)
				// AGE changes by itself: it is not a change.
				for j, c := range v.columns {
					if c == "AGE" {
						cells = append([]any(nil), cells...)
						cells[j] = ""
					}
				}
				addRow(tbl, r.obj, cells...)
				var b strings.Builder
				_ = printTable(&b, &quiet.printFlags, l.all && v.namespaced, tbl)
				out.order = append(out.order, key)
				out.lines[key] = b.String()
				out.objs[key] = r.obj
			}
		}
	}
	return out
}

// completeResources completes get's arguments: resource types first, then
// the names of the objects of the type given, read from the bus.
func completeResources(g *globals) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 && !strings.Contains(toComplete, "/") {
			return readmodel.ResourceWords, cobra.ShellCompDirectiveNoFileComp
		}
		word, prefix := toComplete, ""
		if len(args) > 0 {
			word = args[0]
		} else {
			word, _, _ = strings.Cut(toComplete, "/")
			prefix = word + "/"
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
		defer cancel()
		var names []string
		_ = g.withBus(ctx, func(bus *natsbus.Bus) error {
			f, err := readFleet(ctx, bus)
			if err != nil {
				return err
			}
			r, err := readmodel.LookupResource(word, readmodel.Known(f.Published))
			if err != nil {
				return err
			}
			names = readmodel.Names(f, r)
			return nil
		})
		for i := range names {
			names[i] = prefix + names[i]
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
