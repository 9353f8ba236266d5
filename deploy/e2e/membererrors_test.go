package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/events"
)

// webIn is a Deployment web in ns placed in cluster1 only, with
// pullPolicy as its container's imagePullPolicy.
func webIn(ns string, pullPolicy string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.25.3
        imagePullPolicy: %[2]s
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
`, ns, pullPolicy)
}

// workIn is web's work status in cluster1, as the read model joins it.
func (s *system) workIn(ns string) (events.WorkStatus, error) {
	items, err := s.workItemsIn(ns)
	if err != nil {
		return events.WorkStatus{}, err
	}
	for _, w := range items {
		if w.Key.Name == "web" && w.Cluster == "cluster1" {
			return w, nil
		}
	}
	return events.WorkStatus{}, fmt.Errorf("no work for web in cluster1: %+v", items)
}

var appliesSent = regexp.MustCompile(`(?m)^flotilla_executor_applies_total\{cluster="cluster1"\} (\d+)`)

// appliesTo is how many server-side applies executord sent to cluster1.
func (s *system) appliesTo() int {
	s.t.Helper()
	_, body := httpGet(s.t, s.endpoint("executord")+"/metrics")
	m := appliesSent.FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestAManifestTheMemberRefusesEndsAsFailedWithItsMessageAndIsNotRetried:
// a Deployment whose imagePullPolicy the member's API server refuses as
// Invalid (Flotilla's validation does not check that enum) ends as
// Failed with the member's message in `get work` and `describe work`, and
// executord sends it once, not again on every resync.
func TestAManifestTheMemberRefusesEndsAsFailedWithItsMessageAndIsNotRetried(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.mustCLI("join", "cluster1", "--cluster-kubeconfig", filepath.Join(s.sandbox, "cluster1.kubeconfig"))
	s.waitReady(1)
	ns := uniqueNS("refused")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	s.applyYAML("refused.yaml", webIn(ns, "Sometimes"))

	eventually(t, 60*time.Second, "web Failed in cluster1 with the member's message", func() error {
		w, err := s.workIn(ns)
		if err != nil {
			return err
		}
		if w.Phase != events.WorkFailed || w.Reason != events.WorkReasonRefused || !strings.Contains(w.Message, `imagePullPolicy: Unsupported value: "Sometimes"`) {
			return fmt.Errorf("phase %q, reason %q, message %q", w.Phase, w.Reason, w.Message)
		}
		return nil
	})
	describe := s.mustCLI("describe", "work", "web", "-n", ns)
	if !strings.Contains(describe, "Failed") || !strings.Contains(describe, `imagePullPolicy: Unsupported value: "Sometimes"`) {
		t.Fatalf("describe work does not show the refusal:\n%s", describe)
	}
	if got := s.appliesTo(); got != 1 {
		t.Fatalf("executord sent %d applies to cluster1, want 1", got)
	}
	time.Sleep(10 * time.Second) // five resync intervals
	if got := s.appliesTo(); got != 1 {
		t.Fatalf("executord sent %d applies to cluster1 after the refusal, want still 1 (it retried)", got)
	}
	if w, _ := s.workIn(ns); w.Phase != events.WorkFailed {
		t.Fatalf("the report flipped to %q", w.Phase)
	}

	// A fixed template is a new generation: applied.
	s.applyYAML("fixed.yaml", webIn(ns, "IfNotPresent"))
	eventually(t, 60*time.Second, "the fixed web in cluster1", func() error {
		_, err := s.member("cluster1").AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
		return err
	})
}

// TestAnApplyTheMemberForbidsSaysWhatTheCredentialsLackAndIsRetriedUntilGranted:
// cluster1 joined with a ServiceAccount's token that may read namespaces,
// nodes and pods (what healthd and the namespace check need) but nothing in
// the target namespace: `get work` shows Forbidden and what the
// credentials lack; once the member's admin grants the rights, a retry
// applies the Deployment.
func TestAnApplyTheMemberForbidsSaysWhatTheCredentialsLackAndIsRetriedUntilGranted(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	ctx := context.Background()
	admin := s.member("cluster1")
	ns := uniqueNS("forbidden")
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(ctx, ns, metav1.DeleteOptions{})
		_ = admin.RbacV1().ClusterRoles().Delete(ctx, ns, metav1.DeleteOptions{})
		s.deleteNamespace(ns)
	})
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "restricted"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "restricted", Namespace: ns}}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"list"}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ns}, Subjects: subject}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hour := int64(3600)
	tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "restricted", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(filepath.Join(s.sandbox, "cluster1.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range kc.AuthInfos {
		u.Token = tok.Status.Token
	}
	restricted := filepath.Join(s.dir, "restricted.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, restricted); err != nil {
		t.Fatal(err)
	}
	s.mustCLI("join", "cluster1", "--cluster-kubeconfig", restricted)
	s.waitReady(1)
	s.applyYAML("web.yaml", webIn(ns, "IfNotPresent"))

	want := "Forbidden: the credentials lack get on deployments.apps in namespace " + ns
	eventually(t, 60*time.Second, "web Forbidden in cluster1", func() error {
		w, err := s.workIn(ns)
		if err != nil {
			return err
		}
		if w.Phase != events.WorkForbidden || !strings.HasPrefix(w.Message, want) {
			return fmt.Errorf("phase %q, message %q; want Forbidden, %q", w.Phase, w.Message, want)
		}
		return nil
	})
	if table := s.mustCLI("get", "work", "-n", ns); !strings.Contains(table, "Forbidden") {
		t.Fatalf("get work does not show Forbidden:\n%s", table)
	}

	// The member's admin grants the rights: a retry applies it.
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "restricted-edit"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}, Subjects: subject}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "web in cluster1 once the rights are granted", func() error {
		if _, err := admin.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err != nil {
			return err
		}
		if w, err := s.workIn(ns); err != nil || w.Phase == events.WorkForbidden {
			return fmt.Errorf("work %+v, %v", w, err)
		}
		return nil
	})
}
