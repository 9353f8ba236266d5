package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/internal/member"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

func newJoin(g *globals) *cobra.Command {
	var clusterKubeconfig, kubeconfig, labels, provider, region, syncMode string
	var zones, resources []string
	var timeout time.Duration
	var createAccount bool
	c := &cobra.Command{
		Use:   "join NAME --cluster-kubeconfig FILE",
		Short: "Register a member cluster (karmadactl join)",
		Long: `Register a member cluster. The kubeconfig is flattened (relative paths
resolved, files embedded, current context only) and sealed to the credentials
key before it leaves this process; only healthd and executord can open it.
The Cluster object and that Secret are validated with policyd's validator
first, and the kubeconfig's current context must name a server: on any
error nothing is published and nothing is created in the member.

--kubeconfig FILE alone means the same as --cluster-kubeconfig FILE. Given
both, --kubeconfig names Karmada's control plane, which Flotilla does not
have: it is ignored with a note.

--create-service-account uses the kubeconfig only to create, in the member,
the flotilla-executor ServiceAccount in flotilla-system with a ClusterRole
covering what executord and healthd need (apply and delete the --resources
kinds, read nodes and pods), and a service-account-token Secret; the member
is joined with that token, and the kubeconfig given is not stored. Without
it, join warns when the kubeconfig given is cluster-admin in the member.

--sync-mode Pull registers a cluster whose work its own executord applies
(executord --cluster NAME, run in or beside the member, on a credential
issued with flotilla creds issue executord NAME --cluster NAME): the control
plane's executord leaves it, and schedulerd writes it the assignments that
executord reads. healthd still probes it with the kubeconfig given.`,
		Example: "  flotilla join cluster1 --cluster-kubeconfig .sandbox/cluster1.kubeconfig --labels region=beijing --region cn-north",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			file := clusterKubeconfig
			switch {
			case file == "" && kubeconfig == "":
				return errors.New("--cluster-kubeconfig FILE is required")
			case file == "":
				file = kubeconfig
			case kubeconfig != "":
				fmt.Fprintf(cmd.ErrOrStderr(), "note: --kubeconfig %s names Karmada's control plane; Flotilla has none, so it is ignored\n", kubeconfig)
			}
			if syncMode != policy.SyncModePush && syncMode != policy.SyncModePull {
				return fmt.Errorf("--sync-mode %q: want %s or %s", syncMode, policy.SyncModePush, policy.SyncModePull)
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("--cluster-kubeconfig: %w", err)
			}
			abs, _ := filepath.Abs(file)
			flat, err := member.FlattenKubeconfig(raw, filepath.Dir(abs))
			if err != nil {
				return fmt.Errorf("--cluster-kubeconfig %s: %w", file, err)
			}
			endpoint, err := kubeconfigServer(flat, file)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			lbls := map[string]string{}
			if labels != "" {
				for _, kv := range strings.Split(labels, ",") {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || k == "" {
						return fmt.Errorf("--labels %q: want k=v,k2=v2", labels)
					}
					lbls[k] = v
				}
			}
			secretName := name + "-kubeconfig"
			cl := policy.Cluster{Spec: policy.ClusterSpec{APIEndpoint: endpoint, SyncMode: syncMode, Provider: provider, Region: region, Zones: zones,
				SecretRef: &policy.LocalSecretRef{Namespace: policy.CredentialsNamespace, Name: secretName}}}
			cl.APIVersion, cl.Kind, cl.Name = policy.ClusterAPIVersion, policy.KindCluster, name
			if len(lbls) > 0 {
				cl.Labels = lbls
			}
			obj, err := clusterObject(cl)
			if err != nil {
				return err
			}
			// Validated here, before the member is touched or anything is
			// published: a name policyd refuses would otherwise leave the
			// Secret stored (or an accepted one replaced) beside no Cluster.
			if err := validateJoin(cmd.ErrOrStderr(), name, obj, secretName, flat); err != nil {
				return err
			}
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				// No streams yet means no member yet: the daemons are
				// still starting, and the publish below waits for them.
				members, err := readClusters(ctx, bus)
				if err != nil && !errors.Is(err, natsbus.ErrStreamMissing) {
					return err
				}
				verb := verbCreated
				for _, m := range members {
					switch {
					case m.Registration.Name == name:
						verb = verbConfigured
						// Joined again (new credentials, a new server):
						// what join does not set is kept, as it was.
						kept := keepJoined(&cl, acceptedCluster(ctx, bus, m.Registration), cmd.Flags().Changed)
						if len(kept) > 0 {
							fmt.Fprintf(cmd.ErrOrStderr(), "%s is joined already: its %s are kept (flags change them)\n", name, strings.Join(kept, ", "))
						}
						if obj, err = clusterObject(cl); err != nil {
							return err
						}
					case m.Registration.Spec.APIEndpoint == endpoint:
						return fmt.Errorf("%s: its server %s is already joined as %s: one cluster joined twice would get every workload twice "+
							"(flotilla unjoin %s first, or join it again as %s)", file, endpoint, m.Registration.Name, m.Registration.Name, m.Registration.Name)
					}
				}
				if createAccount {
					flat, err = createMemberAccount(ctx, flat, resources, 30*time.Second)
					if err != nil {
						return fmt.Errorf("--create-service-account in %s: %w", endpoint, err)
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "serviceaccount %s/%s created in %s; joining with its token\n", memberAccountNamespace, memberAccountName, endpoint)
				} else {
					warnIfClusterAdmin(ctx, flat, file, func(w string) { fmt.Fprintln(cmd.ErrOrStderr(), "Warning:", w) })
				}
				key, err := fetchSealKey(ctx, bus)
				if err != nil {
					return err
				}
				sealed, err := sealing.Seal(key.Public, flat)
				if err != nil {
					return err
				}
				secret := events.SealedSecret{Namespace: policy.CredentialsNamespace, Name: secretName, KeyID: key.ID, Data: map[string][]byte{"kubeconfig": sealed}}
				sk := events.ObjectKey{Kind: "Secret", Namespace: policy.CredentialsNamespace, Name: secretName}
				se, err := events.New(events.TypeSecretSealed, cliSource, sk.String(), secret)
				if err != nil {
					return err
				}
				ck := events.ObjectKey{Group: "cluster.karmada.io", Kind: policy.KindCluster, Name: name}
				ce, err := events.New(events.TypeObjectApplied, cliSource, ck.String(), obj)
				if err != nil {
					return err
				}
				return publishAndConfirm(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), bus, []outgoing{
					{events.InputSubject(sk), se, sk, "secret/" + secretName, verb},
					{events.InputSubject(ck), ce, ck, "cluster.cluster.karmada.io/" + name, verb},
				}, timeout)
			})
		},
	}
	c.Flags().StringVar(&clusterKubeconfig, "cluster-kubeconfig", "", "kubeconfig of the member cluster")
	c.Flags().StringVar(&kubeconfig, "kubeconfig", "", "alone: same as --cluster-kubeconfig; with it: Karmada's control plane (ignored)")
	c.Flags().StringVar(&labels, "labels", "", "cluster labels, k=v,k2=v2")
	c.Flags().StringVar(&provider, "provider", "", "spec.provider")
	c.Flags().StringVar(&syncMode, "sync-mode", policy.SyncModePush, "spec.syncMode: Push (the control plane's executord applies its work) or Pull (its own executord --cluster NAME does)")
	c.Flags().StringVar(&region, "region", "", "spec.region")
	c.Flags().StringArrayVar(&zones, "zone", nil, "spec.zones entry; repeatable")
	c.Flags().BoolVar(&createAccount, "create-service-account", false, "create a least-privilege flotilla-executor account in the member and join with its token")
	c.Flags().StringSliceVar(&resources, "resources", defaultMemberResources, "with --create-service-account: the kinds executord may apply and delete, RESOURCE[.GROUP],...")
	c.Flags().DurationVar(&timeout, "timeout", 15*time.Second, "how long to wait for policyd to confirm")
	return c
}

// clusterObject is the Cluster join applies, as the JSON object it
// publishes (no status, no creation time).
func clusterObject(cl policy.Cluster) (map[string]any, error) {
	obj, err := toMap(cl)
	if err != nil {
		return nil, err
	}
	delete(obj, "status")
	md, _ := obj["metadata"].(map[string]any)
	delete(md, "creationTimestamp")
	return obj, nil
}

// acceptedCluster is the joined cluster as policyd last accepted its
// Cluster object, or its registration when that cannot be read: the
// registration follows the accepted object, so a taint or label applied a
// moment before a re-join was not in it yet, and the re-join dropped it.
func acceptedCluster(ctx context.Context, bus *natsbus.Bus, reg events.ClusterRegistration) events.ClusterRegistration {
	ms, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.ObjectSubject(readmodel.ClusterKey(reg.Name)))
	if err != nil || len(ms) == 0 || ms[len(ms)-1].Err != nil || events.Type(ms[len(ms)-1].Event.Type()) != events.TypeObjectAccepted {
		return reg
	}
	var rec events.ObjectRecord
	var cl policy.Cluster
	if events.Decode(ms[len(ms)-1].Event, &rec) != nil || events.UnmarshalJSON(rec.Object, &cl) != nil {
		return reg
	}
	return events.ClusterRegistration{Name: reg.Name, Generation: reg.Generation, Labels: cl.Labels, Annotations: cl.Annotations, Spec: cl.Spec}
}

// keepJoined makes cl, the Cluster a join of an already joined cluster
// builds from its flags, keep what the joined one has and the join does
// not set: labels, annotations, taints, provider, region, zones, sync
// mode and the rest of its spec, each unless its flag was given
// (changed). A join replaced the whole object: a re-join to rotate
// credentials dropped the labels policies select the cluster by, and
// its workloads left it. It returns what was kept, for the user.
func keepJoined(cl *policy.Cluster, joined events.ClusterRegistration, changed func(flag string) bool) []string {
	var kept []string
	spec := joined.Spec // the rest of the spec as it was
	spec.APIEndpoint, spec.SecretRef = cl.Spec.APIEndpoint, cl.Spec.SecretRef
	if !changed("labels") && len(joined.Labels) > 0 {
		cl.Labels = maps.Clone(joined.Labels)
		kept = append(kept, "labels")
	}
	if len(joined.Annotations) > 0 {
		cl.Annotations = maps.Clone(joined.Annotations)
		kept = append(kept, "annotations")
	}
	if len(joined.Spec.Taints) > 0 {
		kept = append(kept, "taints")
	}
	for _, f := range []struct {
		flag, what string
		had        bool // the joined cluster has one of its own
		set        func()
	}{
		{"provider", "provider", joined.Spec.Provider != "", func() { spec.Provider = cl.Spec.Provider }},
		{"region", "region", joined.Spec.Region != "", func() { spec.Region = cl.Spec.Region }},
		{"zone", "zones", len(joined.Spec.Zones) > 0 || joined.Spec.Zone != "", func() { spec.Zones, spec.Zone = cl.Spec.Zones, "" }},
		{"sync-mode", "sync mode", joined.Spec.SyncMode != "" && joined.Spec.SyncMode != cl.Spec.SyncMode, func() { spec.SyncMode = cl.Spec.SyncMode }},
	} {
		switch {
		case changed(f.flag):
			f.set()
		case f.had:
			kept = append(kept, f.what)
		}
	}
	cl.Spec = spec
	return kept
}

func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// kubeconfigServer is the server of the kubeconfig's current context. A
// current context that names no context, a context that names no cluster,
// or a cluster without a server is an error naming file: joined, such a
// member would have no apiEndpoint, and no probe or apply could reach it.
func kubeconfigServer(kubeconfig []byte, file string) (string, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return "", fmt.Errorf("--cluster-kubeconfig %s: %w", file, err)
	}
	switch ctx, ok := cfg.Contexts[cfg.CurrentContext]; {
	case cfg.CurrentContext == "":
		return "", fmt.Errorf("--cluster-kubeconfig %s: current-context is not set: set it to one of its contexts (%s)", file, strings.Join(slices.Sorted(maps.Keys(cfg.Contexts)), ", "))
	case !ok:
		return "", fmt.Errorf("--cluster-kubeconfig %s: current-context %q: no such context (it has %s)", file, cfg.CurrentContext, strings.Join(slices.Sorted(maps.Keys(cfg.Contexts)), ", "))
	default:
		cl, ok := cfg.Clusters[ctx.Cluster]
		switch {
		case !ok:
			return "", fmt.Errorf("--cluster-kubeconfig %s: context %q: cluster %q: no such cluster", file, cfg.CurrentContext, ctx.Cluster)
		case cl.Server == "":
			return "", fmt.Errorf("--cluster-kubeconfig %s: context %q: cluster %q has no server", file, cfg.CurrentContext, ctx.Cluster)
		}
		return cl.Server, nil
	}
}

// validateJoin runs policyd's validator (validation.ValidateObject, as
// apply does) on the Cluster object join will apply and on the Secret that
// carries kubeconfig, printing warnings and errors to errw, each with its
// object and field path. Any error is returned as already reported.
func validateJoin(errw io.Writer, name string, cluster map[string]any, secretName string, kubeconfig []byte) error {
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"namespace": policy.CredentialsNamespace, "name": secretName},
		"data":     map[string]any{"kubeconfig": base64.StdEncoding.EncodeToString(kubeconfig)}}
	n := 0
	for _, o := range []struct {
		label string
		obj   map[string]any
	}{
		{"cluster.cluster.karmada.io/" + name, cluster},
		{"secret/" + secretName + " -n " + policy.CredentialsNamespace, secret},
	} {
		_, errs, warns := validation.ValidateObject(o.obj)
		for _, w := range warns {
			fmt.Fprintf(errw, "Warning: %s: %s\n", o.label, validation.Format(w))
		}
		for _, e := range errs {
			fmt.Fprintf(errw, "error: %s: %s\n", o.label, validation.Format(e))
		}
		n += len(errs)
	}
	if n > 0 {
		fmt.Fprintf(errw, "nothing was joined: %d error(s)\n", n)
		return exitError{errors.New("invalid input")}
	}
	return nil
}
