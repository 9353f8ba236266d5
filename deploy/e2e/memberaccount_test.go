package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
)

// executorUser is the member account join --create-service-account creates.
const executorUser = "system:serviceaccount:flotilla-system:flotilla-executor"

// canI asks cluster's API server (as its admin) whether the member
// account may do verb on resource.group in ns, or get on a non-resource
// path: what `kubectl auth can-i --as` asks.
func (s *system) canI(cluster, verb, resource, group, ns, path string) bool {
	s.t.Helper()
	spec := authorizationv1.SubjectAccessReviewSpec{User: executorUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:flotilla-system", "system:authenticated"}}
	if path != "" {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: path, Verb: verb}
	} else {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: verb, Resource: resource, Group: group, Namespace: ns}
	}
	r, err := s.member(cluster).AuthorizationV1().SubjectAccessReviews().Create(context.Background(),
		&authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return r.Status.Allowed
}

// TestJoinWithCreateServiceAccountAppliesWithALeastPrivilegeAccount: a
// join with an admin kubeconfig warns that it is cluster-admin; `join
// cluster1 --create-service-account --resources deployments.apps` creates
// the flotilla-executor account, which may do what executord and healthd
// need and may not delete Nodes or touch a kind outside --resources.
// cluster1 turns Ready with its capacity read on that account, its
// Deployment is applied (field manager flotilla), and a ConfigMap placed
// there is Forbidden in `get work`, naming the verb, the resource and the
// account: the member saw executord's requests come from the account's
// token. The account is removed afterwards.
func TestJoinWithCreateServiceAccountAppliesWithALeastPrivilegeAccount(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	ctx := context.Background()
	admin := s.member("cluster1")
	ns := uniqueNS("account")
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(ctx, "flotilla-executor", metav1.DeleteOptions{})
		_ = admin.RbacV1().ClusterRoles().Delete(ctx, "flotilla-executor", metav1.DeleteOptions{})
		_ = admin.CoreV1().Namespaces().Delete(ctx, "flotilla-system", metav1.DeleteOptions{})
		s.deleteNamespace(ns)
	})

	kc2 := filepath.Join(s.sandbox, "cluster2.kubeconfig")
	_, errs, code := s.cli("join", "cluster2", "--cluster-kubeconfig", kc2)
	if want := "Warning: " + kc2 + " is cluster-admin in the member"; code != 0 || !strings.Contains(errs, want) {
		t.Errorf("join with an admin kubeconfig: exit %d, stderr %q; want it to have %q", code, errs, want)
	}
	_, errs, code = s.cli("join", "cluster1", "--cluster-kubeconfig", filepath.Join(s.sandbox, "cluster1.kubeconfig"),
		"--create-service-account", "--resources", "deployments.apps")
	if code != 0 || strings.Contains(errs, "Warning:") {
		t.Fatalf("join --create-service-account: exit %d, stderr %q; want 0 and no warning", code, errs)
	}

	for _, c := range []struct {
		verb, resource, group, ns, path string
		want                            bool
	}{
		{"create", "deployments", "apps", ns, "", true},
		{"patch", "deployments", "apps", ns, "", true},
		{"get", "deployments", "apps", ns, "", true},
		{"delete", "deployments", "apps", ns, "", true},
		{"create", "namespaces", "", "", "", true},
		{"get", "namespaces", "", "", "", true},
		{"list", "nodes", "", "", "", true},
		{"list", "pods", "", "", "", true},
		{"get", "", "", "", "/readyz", true},
		{"get", "", "", "", "/apis/apps", true},
		{"delete", "nodes", "", "", "", false},
		{"delete", "namespaces", "", "", "", false},
		{"get", "configmaps", "", ns, "", false},
		{"get", "secrets", "", "kube-system", "", false},
		{"create", "clusterrolebindings", "rbac.authorization.k8s.io", "", "", false},
	} {
		if got := s.canI("cluster1", c.verb, c.resource, c.group, c.ns, c.path); got != c.want {
			t.Errorf("can-i %s %s.%s -n %q %s as %s: %v, want %v", c.verb, c.resource, c.group, c.ns, c.path, executorUser, got, c.want)
		}
	}

	s.waitReady(2)
	eventually(t, 60*time.Second, "cluster1's capacity read on the account", func() error {
		out := s.mustCLI("get", "clusters", "cluster1", "-o", "jsonpath={.status.nodeSummary.readyNum} {.status.kubernetesVersion} {.status.apiEnablements[0].groupVersion}")
		if f := strings.Fields(out); len(f) != 3 || f[0] == "0" {
			return fmt.Errorf("status: %q", out)
		}
		return nil
	})

	s.applyYAML("web.yaml", webIn(ns, "IfNotPresent")+`---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: `+ns+`}
data: {k: v}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web-config, namespace: `+ns+`}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: web-config}]
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
`)
	eventually(t, 60*time.Second, "web applied in cluster1 by executord", func() error {
		d, err := admin.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, f := range d.ManagedFields {
			if f.Manager == "flotilla" && f.Operation == metav1.ManagedFieldsOperationApply {
				return nil
			}
		}
		return fmt.Errorf("no server-side apply by flotilla in %+v", d.ManagedFields)
	})
	want := "Forbidden: the credentials lack get on configmaps in namespace " + ns
	eventually(t, 60*time.Second, "web-config Forbidden in cluster1", func() error {
		items, err := s.workItemsIn(ns)
		if err != nil {
			return err
		}
		for _, w := range items {
			if w.Key.Name == "web-config" && w.Cluster == "cluster1" {
				if w.Phase != events.WorkForbidden || !strings.HasPrefix(w.Message, want) || !strings.Contains(w.Message, "(user "+executorUser+")") {
					return fmt.Errorf("phase %q, message %q; want Forbidden, %q, user %s", w.Phase, w.Message, want, executorUser)
				}
				return nil
			}
		}
		return fmt.Errorf("no work for web-config in cluster1")
	})
	if table := s.mustCLI("get", "work", "-n", ns); !strings.Contains(table, "Forbidden") {
		t.Errorf("get work does not show Forbidden:\n%s", table)
	}
}
