package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// getQuotas lists the FederatedResourceQuotas with their overallUsed.
func getQuotas(ctx context.Context, out io.Writer, bus *natsbus.Bus, l *listFlags) error {
	p, err := readPublished(ctx, bus)
	if err != nil {
		return err
	}
	ms, err := latest(ctx, bus, events.StreamPlacement, events.AllPlacements)
	if err != nil {
		return err
	}
	return printQuotas(out, l, readmodel.Quotas(p, ms))
}

func printQuotas(out io.Writer, l *listFlags, quotas []readmodel.Quota) error {
	items := selected(l, quotas, func(q readmodel.Quota) string { return q.Namespace })
	if ok, err := printStructured(out, l.output, items); ok {
		return err
	}
	w := table(out)
	fmt.Fprintln(w, "NAMESPACE\tNAME\tOVERALL\tOVERALL_USED\tAGE")
	for _, q := range items {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", namespaceColumn(q.Namespace), q.Name, resourceString(q.Overall), orNone(resourceString(q.OverallUsed)), age(q.Record().UpdatedAt))
	}
	return w.Flush()
}

// resourceString writes a resource list as "cpu: 2, memory: 4Gi", names sorted.
func resourceString(l corev1.ResourceList) string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		q := l[corev1.ResourceName(n)]
		parts[i] = n + ": " + q.String()
	}
	return strings.Join(parts, ", ")
}
