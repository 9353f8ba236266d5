package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/readmodel"
)

// unjoinTaint is the NoExecute taint unjoin puts on a cluster whose
// workloads it removes: no placement tolerates it, so failover moves every
// template off the cluster and executord deletes the copies there once
// their replacements run (graceful eviction).
const unjoinTaint = "flotilla.io/unjoining"

func newUnjoin(g *globals) *cobra.Command {
	var cascade string
	var yes bool
	var timeout, drain time.Duration
	c := &cobra.Command{
		Use:   "unjoin NAME [--cascade=background|orphan]",
		Short: "Remove a member cluster (karmadactl unjoin): its workloads, its Cluster object and its credentials",
		Long: `Remove a member cluster: its workloads, then its Cluster object and its sealed
kubeconfig. Before it does, unjoin lists the work that runs there and asks for
a yes (--yes skips the question).

The Secret spec.secretRef names is deleted only when policyd holds it and no
other Cluster references it: one another Cluster still uses is kept (and
named), one that is not there is reported not found.

By default (--cascade=background, Karmada's) the workloads leave the member
first: unjoin taints the cluster ` + unjoinTaint + `:NoExecute, failover places
every template anew over the other members and executord deletes each copy in
the member once its replacement runs, and unjoin waits up to --drain for the
member to hold no work. A template that can run nowhere else keeps its copy (a
failover never deletes the last copy): unjoin then stops and names it, and the
cluster stays joined (tainted) until you delete the template or unjoin with
--cascade=orphan. A cluster that is not Ready (Unreachable, NotReady) cannot
have its workloads removed: unjoin says so at once and changes nothing.

--cascade=orphan leaves the workloads in the member as they are (executord
stops serving the cluster at once); the templates are placed anew elsewhere.`,
		Example:           "  flotilla unjoin cluster3\n  flotilla unjoin cluster3 --cascade=orphan --yes",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeNames(g, "clusters"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cascade != "orphan" && cascade != "background" {
				return fmt.Errorf("--cascade=%s: want background (remove the workloads from the member) or orphan (leave them)", cascade)
			}
			name, ctx := args[0], cmd.Context()
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				f, err := readFleet(ctx, bus)
				if err != nil {
					return err
				}
				i := slices.IndexFunc(f.Clusters, func(c readmodel.Cluster) bool { return c.Registration.Name == name })
				if i < 0 {
					return fmt.Errorf("cluster %q not found", name)
				}
				running := workIn(f.Work, name)
				if cascade == "background" && len(running) > 0 {
					if err := unreachableForRemoval(f.Clusters[i]); err != nil {
						return err
					}
				}
				errw, out := cmd.ErrOrStderr(), cmd.OutOrStdout()
				fate := "removed from the member once placed anew elsewhere"
				if cascade == "orphan" {
					fate = "left in the member (--cascade=orphan) and placed anew elsewhere"
				}
				if len(running) == 0 {
					fmt.Fprintf(errw, "unjoin %s: no template has work there; the Cluster and its credentials are removed\n", name)
				} else {
					fmt.Fprintf(errw, "unjoin %s: %d template(s) have work there, %s:\n", name, len(running), fate)
				}
				for _, r := range running {
					fmt.Fprintln(errw, "  "+r)
				}
				if !yes && !confirmed(cmd.InOrStdin(), errw) {
					return errors.New("unjoin cancelled: nothing was changed")
				}
				if cascade == "background" {
					if err := drainCluster(ctx, out, errw, bus, f.Published, name, timeout, drain); err != nil {
						return err
					}
				}
				spec := f.Clusters[i].Registration.Spec
				targets := []objectRef{{policy.ClusterAPIVersion, policy.KindCluster, "", name}}
				if ref := spec.SecretRef; ref != nil {
					if ref.Namespace == "" {
						ref = &policy.LocalSecretRef{Namespace: policy.CredentialsNamespace, Name: ref.Name}
					}
					switch users := secretUsers(f, *ref, name); {
					case len(users) > 0:
						fmt.Fprintf(out, "secret/%s kept: still used by cluster %s\n", ref.Name, strings.Join(users, ", "))
					case !secretAccepted(f.Published, *ref):
						fmt.Fprintf(errw, "secret/%s -n %s not found: nothing to delete\n", ref.Name, ref.Namespace)
					default:
						targets = append(targets, objectRef{"v1", "Secret", ref.Namespace, ref.Name})
					}
				}
				msgs, err := deletions(targets)
				if err != nil {
					return err
				}
				return publishAndConfirm(ctx, out, errw, bus, msgs, timeout)
			})
		},
	}
	c.Flags().StringVar(&cascade, "cascade", "background", "background: remove the workloads from the member first; orphan: leave them there")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	c.Flags().DurationVar(&timeout, "timeout", defaultConfirmTimeout, "how long to wait for policyd to confirm (exit status 3 after it)")
	c.Flags().DurationVar(&drain, "drain", 5*time.Minute, "with --cascade=background: how long to wait for the member to hold no work")
	return c
}

// unreachableForRemoval refuses --cascade=background for a cluster
// that is not Ready: executord cannot delete the copies there, so the
// drain waited its whole --drain and then blamed the last-copy rule.
func unreachableForRemoval(c readmodel.Cluster) error {
	h := c.Health
	if h == nil || h.Ready {
		return nil
	}
	state := cmp.Or(h.State, "NotReady")
	since := ""
	if !h.Since.IsZero() {
		since = " since " + h.Since.UTC().Format(time.RFC3339)
	}
	why := ""
	if h.Reason != "" {
		why = " (" + h.Reason + ")"
	}
	name := c.Registration.Name
	return fmt.Errorf("cluster %s is %s%s%s: Flotilla cannot remove its workloads from it. "+
		"unjoin %s --cascade=orphan removes the cluster and leaves them there (each template is placed anew on the other members), "+
		"or unjoin once it is Ready again; nothing was changed", name, state, since, why, name)
}

// workIn names the templates with work in cluster (not yet deleted).
func workIn(w readmodel.Work, cluster string) []string {
	var out []string
	for _, s := range w.Items {
		if s.Cluster == cluster && s.Phase != events.WorkDeleted {
			out = append(out, s.Key.Ref())
		}
	}
	return out
}

// drainCluster taints cluster NoExecute (its Cluster object applied again
// with unjoinTaint) and waits up to drain until no work is left there.
func drainCluster(ctx context.Context, out, errw io.Writer, bus *natsbus.Bus, p readmodel.Published, cluster string, timeout, drain time.Duration) error {
	key := readmodel.ClusterKey(cluster)
	rec, ok := p.Records[key]
	if !ok {
		return fmt.Errorf("cluster %q has no Cluster object to taint (joined before Cluster objects were kept?): unjoin --cascade=orphan", cluster)
	}
	obj := readmodel.AppliedObject(rec)
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	taints, _ := spec["taints"].([]any)
	if !slices.ContainsFunc(taints, func(t any) bool { m, _ := t.(map[string]any); return m["key"] == unjoinTaint }) {
		spec["taints"] = append(taints, map[string]any{"key": unjoinTaint, "effect": "NoExecute"})
		e, err := events.New(events.TypeObjectApplied, cliSource, key.String(), obj)
		if err != nil {
			return err
		}
		if err := publishAndConfirm(ctx, out, errw, bus, []outgoing{{events.InputSubject(key), e, key, "cluster.cluster.karmada.io/" + cluster, "tainted " + unjoinTaint + ":NoExecute"}}, timeout); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(drain)
	for {
		_, w, err := readWork(ctx, bus)
		if err != nil {
			return err
		}
		left := workIn(w, cluster)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d template(s) still have work in %s after %s: %v (a failover never deletes the last copy, "+
				"and a CustomResourceDefinition leaves after the custom resources of its kind: delete the template, "+
				"or unjoin --cascade=orphan to leave them); %s stays joined, tainted %s", len(left), cluster, drain, left, cluster, unjoinTaint)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// secretUsers names, sorted, the clusters other than cluster whose spec
// references the Secret ref (policy.ClusterSpec.CredentialSecrets): unjoin
// keeps a Secret they use, or they would lose their credentials.
func secretUsers(f readmodel.Fleet, ref policy.LocalSecretRef, cluster string) []string {
	var out []string
	for _, c := range f.Clusters {
		if c.Registration.Name != cluster && slices.Contains(c.Registration.Spec.CredentialSecrets(), ref.SecretKey()) {
			out = append(out, c.Registration.Name)
		}
	}
	slices.Sort(out)
	return out
}

// secretAccepted reports whether policyd holds the Secret ref: unjoin
// deletes only a Secret that is there (a Cluster may name one never
// applied).
func secretAccepted(p readmodel.Published, ref policy.LocalSecretRef) bool {
	_, ok := p.Records[events.KeyOf("v1", "Secret", ref.Namespace, ref.Name)]
	return ok
}
