package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newReschedule(g *globals) *cobra.Command {
	var namespace, selector, policyName string
	var all, allNS bool
	c := &cobra.Command{
		Use:   "reschedule (TYPE NAME... | TYPE/NAME... | -l SELECTOR | --policy NAME | --all) [-n NS]",
		Short: "Place templates afresh (Karmada's rescheduleTriggeredAt / WorkloadRebalancer)",
		Long: `Ask for a fresh placement of templates. A Divided workload normally stays
where it runs when clusters join, recover or change (steady scheduling, as
Karmada); reschedule divides it again over the clusters that fit now, with
their free capacity plus what the template already runs as weights, and
clears the evictions failover left. Like Karmada's WorkloadRebalancer it
takes a list: templates by TYPE NAME or TYPE/NAME, every template whose
labels match -l, every template a policy claims (--policy, e.g. after a
failover moved a Deployment and its Service), or every template (--all).`,
		Example: "  flotilla reschedule deployment/my-app -n default\n  flotilla reschedule deploy,svc my-app\n" +
			"  flotilla reschedule --policy my-app-policy\n  flotilla reschedule -l app=web\n  flotilla reschedule --all -A",
		ValidArgsFunction: completeResources(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sel, err := labels.Parse(selector)
			if err != nil {
				return fmt.Errorf("-l %q: %w", selector, err)
			}
			if len(args) == 0 && selector == "" && policyName == "" && !all {
				return errors.New("name what to reschedule: TYPE NAME, TYPE/NAME, -l SELECTOR, --policy NAME or --all")
			}
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				var targets []objectRef
				if len(args) > 0 {
					named, err := resolveNamed(ctx, bus, args, namespace)
					if err != nil {
						return err
					}
					targets = append(targets, named...)
				}
				if selector != "" || policyName != "" || all {
					p, err := readPublished(ctx, bus)
					if err != nil {
						return err
					}
					ns := namespace
					if allNS {
						ns = ""
					}
					targets = append(targets, selectTemplates(p, sel, policyName, ns)...)
				}
				if len(targets) == 0 {
					return errors.New("no template matches: nothing to reschedule")
				}
				for _, t := range targets {
					k, e, err := t.request(events.TypeRescheduleRequested)
					if err != nil {
						return err
					}
					if err := bus.Publish(ctx, events.InputSubject(k), e); err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s reschedule requested\n", label(t.kind, t.apiVersion, t.name))
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "follow with: flotilla watch placements")
				return nil
			})
		},
	}
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace (with --all: -A for every namespace)")
	c.Flags().StringVarP(&selector, "selector", "l", "", "every template whose labels match")
	c.Flags().StringVar(&policyName, "policy", "", "every template this policy claims")
	c.Flags().BoolVar(&all, "all", false, "every template in the namespace (every namespace with -A)")
	c.Flags().BoolVarP(&allNS, "all-namespaces", "A", false, "with -l, --policy or --all: in every namespace")
	return c
}

// selectTemplates returns the templates that -l, --policy and --all pick,
// all of the given conditions holding: in namespace (every one for ""), with labels matching sel, claimed by the named policy.
func selectTemplates(p readmodel.Published, sel labels.Selector, policyName, namespace string) []objectRef {
	var out []objectRef
	for _, r := range p.SortedRecords() {
		if r.Role != events.RoleTemplate {
			continue
		}
		if r.Key.Namespace != "" && r.Key.Namespace != namespace && namespace != "" {
			continue
		}
		if !sel.Matches(labels.Set(readmodel.ObjectLabels(r))) {
			continue
		}
		if policyName != "" {
			ref, _ := p.ClaimingPolicy(r.Key)
			if ref == nil || ref.Name != policyName {
				continue
			}
		}
		out = append(out, objectRef{r.APIVersion, r.Key.Kind, r.Key.Namespace, r.Key.Name})
	}
	return out
}
