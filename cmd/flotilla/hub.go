package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/deploy/crds"
)

func newHub() *cobra.Command {
	c := &cobra.Command{
		Use:   "hub",
		Short: "Prepare a kube-apiserver to be Flotilla's hub (docs/hub.md)",
	}
	var kubeconfig string
	var timeout time.Duration
	install := &cobra.Command{
		Use:   "install --kubeconfig FILE",
		Short: "Apply Flotilla's CRDs (deploy/crds) and the karmada-system namespace to the hub",
		Long: `Apply the CustomResourceDefinitions of Karmada's policy, cluster and binding
kinds, generated from Flotilla's types, and the karmada-system namespace to
the hub's API server (server-side apply, field manager flotilla), then wait
until every CRD is established. Idempotent. kubectl apply -f deploy/crds/
does the same. Then run hubd (flotilla hubd --hub-kubeconfig FILE, or
flotilla up --hub-kubeconfig FILE).`,
		Example: "  flotilla hub install --kubeconfig .sandbox/hub.kubeconfig",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return installHub(ctx, cmd, kubeconfig)
		},
	}
	install.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the hub's API server")
	install.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the CRDs to be established")
	_ = install.MarkFlagRequired("kubeconfig")
	c.AddCommand(install)
	return c
}

var (
	namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

func installHub(ctx context.Context, cmd *cobra.Command, kubeconfig string) error {
	raw, err := os.ReadFile(kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	client, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	names, err := fs.Glob(crds.Files, "*.yaml")
	if err != nil {
		return err
	}
	sort.Strings(names) // namespace.yaml sorts after the CRDs; none depends on it
	var installed []string
	force := true
	for _, n := range names {
		b, err := crds.Files.ReadFile(n)
		if err != nil {
			return err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(b, &obj); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		u := unstructured.Unstructured{Object: obj}
		gvr := crdGVR
		if u.GetKind() == "Namespace" {
			gvr = namespaceGVR
		}
		body, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		if _, err := client.Resource(gvr).Patch(ctx, u.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "flotilla", Force: &force}); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s/%s applied\n", map[bool]string{true: "namespace", false: "customresourcedefinition"}[gvr == namespaceGVR], u.GetName())
		if gvr == crdGVR {
			installed = append(installed, u.GetName())
		}
	}
	for _, n := range installed {
		for {
			u, err := client.Resource(crdGVR).Get(ctx, n, metav1.GetOptions{})
			if err == nil && established(u) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("customresourcedefinition/%s not established: %w", n, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%d CRDs established\n", len(installed))
	return nil
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
