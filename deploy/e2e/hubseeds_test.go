package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHubSeed004RegistersClustersFromSecretsAndPlaces: seed 004 through the
// hub with kubectl only. Each member is registered as Karmada users do:
// a Secret in karmada-system holding its kubeconfig and a Cluster whose
// secretRef names it (the seed's own cluster.yaml for aws-prod, unchanged);
// hubd seals the Secrets before they leave it. Then the canary and the
// tuning policies place as in TestSeed004PlacesThroughTheDaemons.
func TestHubSeed004RegistersClustersFromSecretsAndPlaces(t *testing.T) {
	s := newSystem(t)
	h := newHub(s)
	s.startAll()
	s.start("hubd", "--hub-kubeconfig", h.kubeconfig, "--hub-interval", "1s")
	s.waitDaemonsReady("hubd")
	joins := []struct{ name, member, secret, labels, region string }{
		{"aws-prod", "cluster1", "aws-kubeconfig", "{cost-tier: low, region: us-east-1}", "us-east-1"},
		{"azure-staging", "cluster2", "azure-kubeconfig", "{cost-tier: high, region: westeurope}", "westeurope"},
		{"aws-dr", "cluster3", "aws-dr-kubeconfig", "{cost-tier: high, region: us-east-1}", "us-east-1"},
	}
	t.Cleanup(func() {
		for _, j := range joins {
			h.kubectl("delete", "cluster", j.name, "--ignore-not-found")
			h.kubectl("delete", "secret", j.secret, "-n", "karmada-system", "--ignore-not-found")
		}
	})
	// azure-staging is registered as karmadactl join registers a member:
	// a token and CA bundle in karmada-cluster, the server in apiEndpoint.
	h.kubectl("create", "namespace", "karmada-cluster")
	server, token := memberServerAndToken(t, s.sandbox, "cluster2")
	t.Cleanup(func() { h.kubectl("delete", "secret", "azure-staging", "-n", "karmada-cluster", "--ignore-not-found") })
	for _, j := range joins {
		h.kubectl("delete", "secret", j.secret, "-n", "karmada-system", "--ignore-not-found")
		if j.name == "aws-prod" {
			h.mustKubectl("create", "secret", "generic", j.secret, "-n", "karmada-system", "--from-file=value="+filepath.Join(s.sandbox, j.member+".kubeconfig"))
			h.mustKubectl("apply", "-f", filepath.Join(seed004, "cluster.yaml"))
			continue
		}
		credentials := "secretRef: {namespace: karmada-system, name: " + j.secret + "}"
		if j.name == "azure-staging" {
			h.kubectl("delete", "secret", "azure-staging", "-n", "karmada-cluster", "--ignore-not-found")
			h.mustKubectl("create", "secret", "generic", "azure-staging", "-n", "karmada-cluster", "--from-literal=token="+token,
				"--from-file=caBundle="+filepath.Join(s.sandbox, j.member, "pki", "ca.crt"))
			credentials = "apiEndpoint: " + server + "\n  secretRef: {namespace: karmada-cluster, name: azure-staging}"
		} else {
			h.mustKubectl("create", "secret", "generic", j.secret, "-n", "karmada-system", "--from-file=value="+filepath.Join(s.sandbox, j.member+".kubeconfig"))
		}
		h.mustKubectl("apply", "-f", s.write(j.name+".yaml", fmt.Sprintf(`apiVersion: cluster.karmada.io/v1alpha1
kind: Cluster
metadata: {name: %s, labels: %s}
spec:
  syncMode: Push
  region: %s
  %s
`, j.name, j.labels, j.region, credentials)))
	}
	s.waitReady(3)
	// The karmada-cluster Secret left hubd sealed: its token is on no
	// subject, plain or base64, and it is no template.
	s.expectNoPlainToken(token)
	s.expectNoPlainToken(base64.StdEncoding.EncodeToString([]byte(token)))
	h.until(30*time.Second, `(?s)aws-dr\s+v\S+\s+Push\s+True.*aws-prod\s+v\S+\s+Push\s+True.*azure-staging\s+v\S+\s+Push\s+True`, "get", "clusters")

	ns := uniqueNS("hub-seed004")
	h.mustKubectl("create", "namespace", ns)
	t.Cleanup(func() { h.deleteNamespace(ns); s.deleteNamespace(ns) })
	canary, tuning := seed004Workloads(t, ns)
	h.mustKubectl("apply", "-f", s.write("canary.yaml", canary))
	h.mustKubectl("apply", "-f", s.write("tuning.yaml", tuning))
	expectMembers(s, "frontend 8 on aws-prod (cluster1), 2 on azure-staging (cluster2)", ns, "frontend", map[string]int32{"cluster1": 8, "cluster2": 2, "cluster3": -1})
	expectMembers(s, "checkout duplicated in us-east-1 only (aws-prod, aws-dr)", ns, "checkout", map[string]int32{"cluster1": 4, "cluster2": -1, "cluster3": 4})
	expectMembers(s, "batch-report on the cost-tier low cluster only", ns, "batch-report", map[string]int32{"cluster1": 3, "cluster2": -1, "cluster3": -1})
	h.until(60*time.Second, `frontend\s+10/10`, "get", "deploy", "frontend", "-n", ns)
}

// TestHubSeed002RegistersAClusterAndPlacesNginxGlobal: seed 002 through the
// hub with kubectl alone: its clusters.yaml (sandbox cluster3's kubeconfig
// in the Secret) registers aws-prod, its nginx-global.yaml, unchanged, runs
// all 10 replicas there; the credentials Secret reaches no member and the
// bus never carries the member's token in plain text.
func TestHubSeed002RegistersAClusterAndPlacesNginxGlobal(t *testing.T) {
	s := newSystem(t)
	h := newHub(s)
	s.startAll()
	s.start("hubd", "--hub-kubeconfig", h.kubeconfig, "--hub-interval", "1s")
	s.waitDaemonsReady("hubd")
	doc, token := seed002Clusters(t, s.sandbox)
	clusters := s.write("clusters.yaml", doc)
	nginx := filepath.Join("..", "..", "examples", "seed002", "nginx-global.yaml")
	s.cleanMembersOf([]string{"cluster3"}, "default", "nginx-web")
	t.Cleanup(func() {
		h.kubectl("delete", "-f", nginx, "--ignore-not-found")
		h.kubectl("delete", "-f", clusters, "--ignore-not-found")
		s.cleanMembersOf([]string{"cluster3"}, "default", "nginx-web")
	})
	h.mustKubectl("apply", "-f", clusters)
	s.waitReady(1)
	h.mustKubectl("apply", "-f", nginx)
	expectMembers(s, "nginx-web all 10 on aws-prod (cluster3)", "default", "nginx-web", map[string]int32{"cluster3": 10})
	h.until(60*time.Second, `nginx-web-deployment\s+True\s+True`, "get", "rb", "-n", "default")
	if _, err := s.member("cluster3").CoreV1().Secrets("karmada-system").Get(context.Background(), "aws-kubeconfig-secret", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("credentials Secret propagated to the member? %v", err)
	}
	s.expectNoPlainToken(token)
}

// TestHubPlacesAClusterScopedTemplate: a ClusterRole and the
// ClusterPropagationPolicy that places it on cluster1, applied to the hub,
// reach cluster1; the hub shows a ClusterResourceBinding for it; deleting
// it on the hub removes it from cluster1.
func TestHubPlacesAClusterScopedTemplate(t *testing.T) {
	s, h := startWithHub(t)
	role := "flotilla-hub-" + uniqueNS("e2e")
	file := s.write("clusterrole.yaml", fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[1]s}
rules: [{apiGroups: [apps], resources: [deployments], verbs: [get, list]}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: %[1]s}
spec:
  resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: %[1]s}]
  placement: {clusterAffinity: {clusterNames: [cluster1]}}
`, role))
	t.Cleanup(func() {
		h.kubectl("delete", "-f", file, "--ignore-not-found")
		_ = s.member("cluster1").RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{})
	})
	h.mustKubectl("apply", "-f", file)
	cs := s.member("cluster1")
	eventually(t, 60*time.Second, "ClusterRole "+role+" in cluster1", func() error {
		_, err := cs.RbacV1().ClusterRoles().Get(context.Background(), role, metav1.GetOptions{})
		return err
	})
	h.until(30*time.Second, role+`-clusterrole\s+True\s+True`, "get", "crb")
	h.mustKubectl("delete", "clusterrole", role)
	eventually(t, 60*time.Second, "ClusterRole "+role+" gone from cluster1", func() error {
		if _, err := cs.RbacV1().ClusterRoles().Get(context.Background(), role, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
}
