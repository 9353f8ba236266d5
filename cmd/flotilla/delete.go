package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newDelete(g *globals) *cobra.Command {
	var m manifestFlags
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "delete (-f FILE|DIR|- [-R] | TYPE NAME... | TYPE/NAME...) [-n NS]",
		Short: "Delete templates, policies or Cluster objects; deleted templates leave every member",
		Long: `Delete templates, policies or Cluster objects; deleted templates leave every member.

delete waits up to --timeout for policyd to confirm every removal, also
while the daemons are starting. Exit status, as for apply: 0 every removal
confirmed, 1 one refused or an error, 3 every request stored on the bus but
not all confirmed within --timeout.

As kubectl's, -n is also the namespace of the objects in -f files that
name none, and an object there naming another namespace than -n is an
error. An object policyd has not accepted is not found: delete says so,
publishes nothing for it, deletes the others and exits 1.

A Cluster in a -f file without spec.secretRef whose cluster is joined
(the stand-in clusters.yaml the examples ship) is kept, with a warning:
flotilla unjoin NAME (or delete cluster NAME) removes a joined cluster.`,
		Example: "  flotilla delete -f examples/seed000/my-app.yaml\n  flotilla delete deployment/my-app -n default\n" +
			"  flotilla delete pp my-app-policy\n  flotilla delete deploy,svc my-app",
		ValidArgsFunction: completeResources(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var docs []validation.Document
			if len(m.files) > 0 {
				res, err := m.load(cmd)
				if err != nil {
					return err
				}
				docs = res.Docs
			}
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				if len(docs) == 0 && len(args) == 0 {
					return errors.New("name what to delete: -f FILE, TYPE NAME or TYPE/NAME")
				}
				accepted, err := readPublished(ctx, bus)
				if err != nil {
					return err
				}
				m.customNamespaces(accepted, docs)
				docs = keepJoinedClusters(cmd.ErrOrStderr(), accepted, docs)
				fromFiles := fileTargets(docs)
				targets, missing := acceptedOnly(cmd.ErrOrStderr(), accepted, fromFiles)
				if len(args) > 0 {
					named, err := resolveNamed(ctx, bus, args, m.namespace)
					if err != nil {
						return err
					}
					targets = append(targets, named...)
				}
				if len(targets) == 0 && missing == 0 {
					return nil // only joined clusters, kept (keepJoinedClusters)
				}
				if len(targets) == 0 {
					return exitError{fmt.Errorf("%d object(s) not found", missing)}
				}
				var keys []events.ObjectKey
				for _, t := range targets {
					keys = append(keys, events.KeyOf(t.apiVersion, t.kind, t.namespace, t.name))
				}
				for _, w := range readmodel.DeleteWarnings(accepted, keys) {
					fmt.Fprintln(cmd.ErrOrStderr(), "Warning:", w)
				}
				msgs, err := deletions(targets)
				if err != nil {
					return err
				}
				err = publishAndConfirm(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), bus, msgs, timeout)
				if missing > 0 { // kubectl's status: 1 while anything was not found
					if err != nil {
						return exitError{fmt.Errorf("%d object(s) not found; %w", missing, err)}
					}
					return exitError{fmt.Errorf("%d object(s) not found", missing)}
				}
				return err
			})
		},
	}
	m.addTo(c, "namespace of TYPE NAME, and of the objects in -f files that name none")
	c.Flags().DurationVar(&timeout, "timeout", defaultConfirmTimeout, "how long to wait for policyd to confirm (exit status 3 after it)")
	return c
}

// keepJoinedClusters drops from docs the Cluster documents without
// spec.secretRef that name a joined cluster (joinedCredentials), saying so
// on errw: every example folder ships stand-in Cluster files, and
// `+"`delete -f examples/<dir>/`"+` unjoined the real members behind them without
// a word. flotilla unjoin, or delete cluster NAME, removes a joined cluster.
func keepJoinedClusters(errw io.Writer, accepted readmodel.Published, docs []validation.Document) []validation.Document {
	out := docs[:0:0]
	for _, d := range docs {
		if ref := joinedCredentials(accepted, d); ref != nil {
			fmt.Fprintf(errw, "Warning: %s: line %d: cluster %s kept: it is joined with the credentials in secret %s, "+
				"and this file's Cluster has no spec.secretRef; flotilla unjoin %s removes it\n",
				d.Where(), d.Line, d.Name, secretName(ref), d.Name)
			continue
		}
		out = append(out, d)
	}
	return out
}

// fileRef is an object named in a -f file.
type fileRef struct {
	objectRef
	file string
}

// fileTargets are the objects of docs to delete (in the namespace -n gave
// them, manifestFlags.load).
func fileTargets(docs []validation.Document) []fileRef {
	out := make([]fileRef, 0, len(docs))
	for _, d := range docs {
		out = append(out, fileRef{objectRef{d.APIVersion, d.Kind, d.Namespace, d.Name}, d.File})
	}
	return out
}

// acceptedOnly returns the objects of refs policyd has accepted, as
// `delete TYPE NAME` finds them (readmodel.Published), and how many it has
// not: each of those is reported on errw as not found, and nothing is
// published for it (kubectl: NotFound, exit status 1).
func acceptedOnly(errw io.Writer, accepted readmodel.Published, refs []fileRef) ([]objectRef, int) {
	var out []objectRef
	missing := 0
	for _, r := range refs {
		if _, ok := accepted.Records[events.KeyOf(r.apiVersion, r.kind, r.namespace, r.name)]; ok {
			out = append(out, r.objectRef)
			continue
		}
		missing++
		where := ""
		if r.namespace != "" {
			where = " in namespace " + r.namespace
		}
		fmt.Fprintf(errw, "error: %s: %s not found%s\n", r.file, label(r.kind, r.apiVersion, r.name), where)
	}
	return out, missing
}

// deletions are the requests that delete targets.
func deletions(targets []objectRef) ([]outgoing, error) {
	var msgs []outgoing
	for _, t := range targets {
		k, e, err := t.request(events.TypeObjectDeleted)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, outgoing{events.InputSubject(k), e, k, label(t.kind, t.apiVersion, t.name), ""})
	}
	return msgs, nil
}

// objectRef names an object for a request about it (delete, reschedule).
type objectRef struct{ apiVersion, kind, namespace, name string }

// request is an event of type typ about the object, keyed as policyd keys
// it; it carries the object's identity alone.
func (t objectRef) request(typ events.Type) (events.ObjectKey, events.Event, error) {
	k := events.KeyOf(t.apiVersion, t.kind, t.namespace, t.name)
	e, err := events.New(typ, cliSource, k.String(), readmodel.Identity(t.apiVersion, t.kind, t.namespace, t.name))
	return k, e, err
}

// resolveNamed turns kubectl's argument forms (TYPE NAME..., TYPE/NAME...,
// TYPE1,TYPE2 NAME) into the accepted templates and policies they name
// (readmodel.ParseArgs, readmodel.ResolveRecords): a name two kinds share
// is ambiguous only when no kind is given. Every type needs a name.
func resolveNamed(ctx context.Context, bus *natsbus.Bus, args []string, namespace string) ([]objectRef, error) {
	p, err := readPublished(ctx, bus)
	if err != nil {
		return nil, err
	}
	targets, err := readmodel.ParseArgs(args, readmodel.Known(p), false)
	if err != nil {
		return nil, err
	}
	var out []objectRef
	for _, t := range targets {
		if len(t.Names) == 0 {
			return nil, fmt.Errorf("%s: resource(s) were provided, but no name was given", t.Resource.Word)
		}
		rs, err := readmodel.ResolveRecords(p, t, namespace, false)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			out = append(out, objectRef{r.APIVersion, r.Key.Kind, r.Key.Namespace, r.Key.Name})
		}
	}
	return out, nil
}
