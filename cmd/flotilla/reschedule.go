package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
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
forgets the evictions failover left: released and held ones, and those of
purgeMode Never. A Gracefully evicted copy still within its grace period
stays, and its cluster is no candidate, until the replacement is healthy or
the grace period ends (as Karmada's graceful eviction tasks).

Like Karmada's WorkloadRebalancer it takes a list: templates by TYPE NAME or TYPE/NAME, every template whose
labels match -l, every template a policy claims (--policy, e.g. after a
failover moved a Deployment and its Service), or every template (--all).

Only a template a policy claims can be placed afresh: one named that no
policy claims is an error (nothing is published for it; the others are
rescheduled, and the exit status is 1), and -l, --policy and --all pass
such templates over. --policy names a policy that must exist.`,
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
			if all && len(args) > 0 {
				return errors.New("--all takes no names: give TYPE NAME... or --all, not both")
			}
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				p, err := readPublished(ctx, bus)
				if err != nil {
					return err
				}
				ns := namespace
				if allNS {
					ns = ""
				}
				if policyName != "" && !policyExists(p, policyName, ns) {
					where := "in namespace " + namespace
					if allNS {
						where = "in any namespace"
					}
					return fmt.Errorf("--policy %s: no propagationpolicy %s %s, nor a clusterpropagationpolicy", policyName, policyName, where)
				}
				var named []objectRef
				if len(args) > 0 {
					if named, err = resolveNamed(ctx, bus, args, namespace); err != nil {
						return err
					}
				}
				claimed, unclaimed := splitClaimed(p, named, nil)
				for _, t := range unclaimed {
					fmt.Fprintf(cmd.ErrOrStderr(), "error: %s: not rescheduled: no policy claims it (policyd places only what a policy claims)\n", label(t.kind, t.apiVersion, t.name))
				}
				if selector != "" || policyName != "" || all {
					// A selection takes the templates a policy claims; it
					// says how many others it passed over.
					picked, passed := splitClaimed(p, selectTemplates(p, sel, policyName, ns), slices.Concat(claimed, unclaimed))
					claimed = append(claimed, picked...)
					if len(passed) > 0 {
						fmt.Fprintf(cmd.ErrOrStderr(), "%d matching template(s) passed over: no policy claims them\n", len(passed))
					}
				}
				if len(claimed) == 0 && len(unclaimed) == 0 {
					return errors.New("no template a policy claims matches: nothing to reschedule")
				}
				for _, t := range claimed {
					k, e, err := t.request(events.TypeRescheduleRequested)
					if err != nil {
						return err
					}
					if err := bus.Publish(ctx, events.InputSubject(k), e); err != nil {
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s reschedule requested\n", label(t.kind, t.apiVersion, t.name))
				}
				if len(claimed) > 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "follow with: flotilla watch placements")
				}
				if len(unclaimed) > 0 {
					return exitError{fmt.Errorf("%d template(s) not rescheduled: no policy claims them", len(unclaimed))}
				}
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

// splitClaimed splits targets, without repeats and leaving out those in
// already, into the templates a policy has placed (a live binding: what
// policyd reschedules) and those it would refuse (policyd dead-letters a
// reschedule of a template no policy claims).
func splitClaimed(p readmodel.Published, targets, already []objectRef) (claimed, unclaimed []objectRef) {
	seen := map[objectRef]bool{}
	for _, t := range already {
		seen[t] = true
	}
	for _, t := range targets {
		if seen[t] {
			continue
		}
		seen[t] = true
		if p.Live[events.KeyOf(t.apiVersion, t.kind, t.namespace, t.name)] {
			claimed = append(claimed, t)
		} else {
			unclaimed = append(unclaimed, t)
		}
	}
	return claimed, unclaimed
}

// policyExists reports whether a propagation policy named name is
// accepted: a PropagationPolicy in namespace (any for ""), or a
// ClusterPropagationPolicy.
func policyExists(p readmodel.Published, name, namespace string) bool {
	for k, r := range p.Records {
		if r.Role != events.RolePolicy || k.Name != name {
			continue
		}
		if k.Kind == policy.KindClusterPropagationPolicy || namespace == "" || k.Namespace == namespace {
			return true
		}
	}
	return false
}
