package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newDelete(g *globals) *cobra.Command {
	var files []string
	var namespace string
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "delete (-f FILE|DIR|- | KIND/NAME [-n NS])",
		Short: "Delete templates, policies or Cluster objects; deleted templates leave every member",
		Example: "  flotilla delete -f examples/seed000/my-app.yaml\n  flotilla delete deployment/my-app -n default\n" +
			"  flotilla delete propagationpolicy/my-app-policy",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var targets []deleteTarget
			if len(files) > 0 {
				res, err := load(cmd, files)
				if err != nil {
					return err
				}
				for _, d := range res.Docs {
					targets = append(targets, deleteTarget{d.APIVersion, d.Kind, d.Namespace, d.Name})
				}
			}
			bus, err := g.connect(ctx)
			if err != nil {
				return err
			}
			defer bus.Close()
			for _, a := range args {
				t, err := resolveRef(ctx, bus, a, namespace)
				if err != nil {
					return err
				}
				targets = append(targets, t)
			}
			if len(targets) == 0 {
				return errors.New("name what to delete: -f FILE or KIND/NAME")
			}
			var msgs []outgoing
			for _, t := range targets {
				k := events.KeyOf(t.apiVersion, t.kind, t.namespace, t.name)
				md := map[string]any{"name": t.name}
				if t.namespace != "" {
					md["namespace"] = t.namespace
				}
				e, err := events.New(events.TypeObjectDeleted, cliSource, k.String(), map[string]any{"apiVersion": t.apiVersion, "kind": t.kind, "metadata": md})
				if err != nil {
					return err
				}
				msgs = append(msgs, outgoing{events.InputSubject(k), e, k, label(t.kind, t.apiVersion, t.name)})
			}
			return publishAndConfirm(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), bus, msgs, timeout)
		},
	}
	c.Flags().StringArrayVarP(&files, "filename", "f", nil, "file, directory or - (stdin); repeatable")
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace of KIND/NAME")
	c.Flags().DurationVar(&timeout, "timeout", 15*time.Second, "how long to wait for policyd to confirm")
	return c
}

type deleteTarget struct{ apiVersion, kind, namespace, name string }

// resolveRef turns KIND/NAME into an object policyd knows, the kubectl way
// (readmodel.ResolveObject).
func resolveRef(ctx context.Context, bus *natsbus.Bus, ref, namespace string) (deleteTarget, error) {
	if _, _, err := readmodel.SplitRef(ref); err != nil {
		return deleteTarget{}, err
	}
	p, err := readPublished(ctx, bus)
	if err != nil {
		return deleteTarget{}, err
	}
	r, err := readmodel.ResolveObject(p, ref, namespace)
	if err != nil {
		return deleteTarget{}, err
	}
	return deleteTarget{r.APIVersion, r.Key.Kind, r.Key.Namespace, r.Key.Name}, nil
}
