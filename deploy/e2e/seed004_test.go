package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const seed004 = "../../examples/seed004"

// TestSeed004PlacesThroughTheDaemons: seed 004's examples placed by the
// running daemons on real members. The sandbox apiservers are joined under
// the article's names: cluster1 as aws-prod (cost-tier low, us-east-1),
// cluster2 as azure-staging (cost-tier high, westeurope), cluster3 as aws-dr
// (cost-tier high, us-east-1). The canary sends 8 of frontend's 10 replicas
// to aws-prod and 2 to azure-staging; the region spread keeps a
// region-sensitive workload in one region (us-east-1, both its clusters); the
// cost-tier preference puts a one-cluster workload on the cost-tier low one.
func TestSeed004PlacesThroughTheDaemons(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	joins := []struct{ name, member, labels, region string }{
		{"aws-prod", "cluster1", "cost-tier=low,region=us-east-1", "us-east-1"},
		{"azure-staging", "cluster2", "cost-tier=high,region=westeurope", "westeurope"},
		{"aws-dr", "cluster3", "cost-tier=high,region=us-east-1", "us-east-1"},
	}
	for _, j := range joins {
		s.mustCLI("join", j.name, "--cluster-kubeconfig", filepath.Join(s.sandbox, j.member+".kubeconfig"), "--labels", j.labels, "--region", j.region)
	}
	s.waitReady(3)
	ns := uniqueNS("seed004")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	canary, tuning := seed004Workloads(t, ns)
	s.applyYAML("canary.yaml", canary)
	s.applyYAML("tuning.yaml", tuning)
	expectMembers(s, "frontend 8 on aws-prod (cluster1), 2 on azure-staging (cluster2)", ns, "frontend", map[string]int32{"cluster1": 8, "cluster2": 2, "cluster3": -1})
	expectMembers(s, "checkout duplicated in us-east-1 only (aws-prod, aws-dr)", ns, "checkout", map[string]int32{"cluster1": 4, "cluster2": -1, "cluster3": 4})
	expectMembers(s, "batch-report on the cost-tier low cluster only", ns, "batch-report", map[string]int32{"cluster1": 3, "cluster2": -1, "cluster3": -1})
}

// seed004Workloads are seed 004's canary and tuning files in namespace ns,
// the tuning file with the region-sensitive checkout and the budget-tight
// batch-report Deployments its policies select.
func seed004Workloads(t *testing.T, ns string) (canary, tuning string) {
	t.Helper()
	inNS := func(file string) string {
		b, err := os.ReadFile(filepath.Join(seed004, file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(b), "namespace: default", "namespace: "+ns)
	}
	return inNS("canary-release.yaml"), inNS("tuning.yaml") + fmt.Sprintf(`
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: checkout, namespace: %[1]s, labels: {latency: region-sensitive}}
spec:
  replicas: 4
  selector: {matchLabels: {app: checkout}}
  template:
    metadata: {labels: {app: checkout}}
    spec: {containers: [{name: c, image: nginx:1.25.3}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: batch-report, namespace: %[1]s, labels: {budget: tight}}
spec:
  replicas: 3
  selector: {matchLabels: {app: batch-report}}
  template:
    metadata: {labels: {app: batch-report}}
    spec: {containers: [{name: c, image: nginx:1.25.3}]}
`, ns)
}
