package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newExplain(g *globals) *cobra.Command {
	var namespace, output string
	c := &cobra.Command{
		Use:   "explain TYPE NAME... | TYPE/NAME... | NAME",
		Short: "Explain a placement: the policy, every cluster's verdict, the scores and the replica arithmetic",
		Long: `Explain why a template is placed where it is: which policy claimed it,
which clusters passed every filter and why each other cluster was left out
(one line per cluster, plugin and reason), the scores, how the replicas
were divided, when the decision was made and what changed since (a cluster
that became Ready or was lost after it), and the cluster names the policy
gives that are no member. Read from the latest placement decision on the
bus. A NAME alone is enough when one template has it.`,
		Example:           "  flotilla explain deployment/my-app\n  flotilla explain deploy my-app\n  flotilla explain deploy/nginx-web -n default -o json",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeResources(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return fmt.Errorf("-o %q: want json or yaml", output)
			}
			ctx := cmd.Context()
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				f, err := readFleet(ctx, bus)
				if err != nil {
					return err
				}
				refs, err := templateRefs(f, args, namespace, true)
				if err != nil {
					return err
				}
				ms, err := latest(ctx, bus, events.StreamPlacement, events.AllPlacements)
				if err != nil {
					return err
				}
				var decisions []events.PlacementDecision
				for _, ref := range refs {
					p, err := readmodel.ExplainPlacement(ms, ref, namespace)
					if err != nil {
						return err
					}
					decisions = append(decisions, p)
				}
				if output != "" {
					return printDecisions(cmd.OutOrStdout(), output, decisions)
				}
				for i, p := range decisions {
					if i > 0 {
						fmt.Fprintln(cmd.OutOrStdout())
					}
					readmodel.WriteExplanation(cmd.OutOrStdout(), p, f)
				}
				return nil
			})
		},
	}
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace")
	c.Flags().StringVarP(&output, "output", "o", "", "json or yaml: the whole decision")
	return c
}

// printDecisions prints placement decisions whole, as JSON or YAML (a
// decision is Flotilla's own record: Karmada has no object for it).
func printDecisions(out io.Writer, format string, ds []events.PlacementDecision) error {
	var b []byte
	var err error
	if format == "json" {
		b, err = json.MarshalIndent(map[string]any{"items": ds}, "", "  ")
		b = append(b, '\n')
	} else {
		b, err = yaml.Marshal(map[string]any{"items": ds})
	}
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// templateRefs resolves explain's and describe's arguments (kubectl's
// forms, or a bare NAME) to the templates they name, each as an
// unambiguous KIND.GROUP/NAME. A template that is gone is still named (its
// withdrawn placement says so); work and placements name every template
// of the name.
func templateRefs(f readmodel.Fleet, args []string, namespace string, bare bool) ([]string, error) {
	targets, err := readmodel.ParseArgs(args, readmodel.Known(f.Published), bare)
	if err != nil {
		return nil, err
	}
	return templateRefsOf(f, targets, namespace)
}

// templateRefsOf is templateRefs for arguments already parsed.
func templateRefsOf(f readmodel.Fleet, targets []readmodel.Target, namespace string) ([]string, error) {
	var refs []string
	for _, t := range targets {
		if len(t.Names) == 0 {
			return nil, fmt.Errorf("%s: name the template, e.g. %s my-app", t.Resource.Word, t.Resource.Word)
		}
		switch t.Resource.View {
		case readmodel.ViewTemplates:
			rs, err := readmodel.ResolveRecords(f.Published, t, namespace, false)
			if err != nil {
				var amb *readmodel.AmbiguousError
				if errors.As(err, &amb) || t.Resource.Kind == "" {
					return nil, err
				}
				// Deleted: its withdrawn placement says so.
				for _, n := range t.Names {
					refs = append(refs, t.Ref(n))
				}
				continue
			}
			for _, r := range rs {
				refs = append(refs, kindRef(r.Key))
			}
		case readmodel.ViewWork, readmodel.ViewPlacements:
			for _, n := range t.Names {
				if strings.Contains(n, "/") { // the template as KIND/NAME
					more, err := templateRefs(f, []string{n}, namespace, false)
					if err != nil {
						return nil, err
					}
					refs = append(refs, more...)
					continue
				}
				found := false
				for _, p := range f.Decisions {
					if p.Key.Name == n && (p.Key.Namespace == namespace || p.Key.Namespace == "") {
						refs, found = append(refs, kindRef(p.Key)), true
					}
				}
				if !found {
					return nil, fmt.Errorf("no placed template named %q in namespace %s (flotilla get placements -A lists them)", n, namespace)
				}
			}
		default:
			return nil, fmt.Errorf("%s: explain and describe take templates (deployment/my-app), work or placements", t.Resource.Word)
		}
	}
	return refs, nil
}

// kindRef is key as an unambiguous reference: kind.group/name.
func kindRef(k events.ObjectKey) string {
	group := k.Group
	if group == "" {
		group = "core"
	}
	return strings.ToLower(k.Kind) + "." + group + "/" + k.Name
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
