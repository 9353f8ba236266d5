package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// TestKubernetesManifestsPassServerSideDryRun validates deploy/kubernetes
// against a real apiserver: the namespace is created, every other object is
// applied with server-side apply in dry-run mode.
func TestKubernetesManifestsPassServerSideDryRun(t *testing.T) {
	s := newSystem(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.sandbox, "cluster1.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(s.member("cluster1").Discovery()))
	files, _ := filepath.Glob("../kubernetes/*.yaml")
	var docs []*unstructured.Unstructured
	for _, f := range files {
		if strings.HasSuffix(f, "kustomization.yaml") {
			continue
		}
		raw, _ := os.ReadFile(f)
		for _, part := range strings.Split(string(raw), "\n---") {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(part), &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(obj) > 0 {
				docs = append(docs, &unstructured.Unstructured{Object: obj})
			}
		}
	}
	if len(docs) < 6 {
		t.Fatalf("found %d manifests", len(docs))
	}
	ctx := context.Background()
	apply := func(u *unstructured.Unstructured, dryRun bool) {
		m, err := mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
		if err != nil {
			t.Fatalf("%s/%s: %v", u.GetKind(), u.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		}
		opts := metav1.ApplyOptions{FieldManager: "flotilla-e2e", Force: true}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		if _, err := ri.Apply(ctx, u.GetName(), u, opts); err != nil {
			t.Errorf("server-side dry-run of %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	for _, u := range docs {
		if u.GetKind() == "Namespace" {
			apply(u, false)
		}
	}
	for _, u := range docs {
		if u.GetKind() != "Namespace" {
			apply(u, true)
		}
	}
}
