package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An interpreter customization or a CRD says its kind is meant: apply does
// not refuse that kind as a typo.
func TestDefinedKinds(t *testing.T) {
	cases := []struct {
		name, apiVersion, kind string
		obj                    map[string]any
		want                   map[string]bool
	}{
		{"a customization's target", "config.karmada.io/v1alpha1", "ResourceInterpreterCustomization",
			map[string]any{"spec": map[string]any{"target": map[string]any{"apiVersion": "ray.io/v1", "kind": "RayCluster"}}},
			map[string]bool{"ray.io/RayCluster": true}},
		{"a CRD's group and kind", "apiextensions.k8s.io/v1", "CustomResourceDefinition",
			map[string]any{"spec": map[string]any{"group": "kubeflow.org", "names": map[string]any{"kind": "PyTorchJob"}}},
			map[string]bool{"kubeflow.org/PyTorchJob": true}},
		{"any other object names no kind", "apps/v1", "Deployment", map[string]any{"spec": map[string]any{"group": "x"}}, map[string]bool{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := map[string]bool{}
			definedKinds(c.apiVersion, c.kind, c.obj, got)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
