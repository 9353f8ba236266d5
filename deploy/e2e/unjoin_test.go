package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUnjoinOrphanLeavesTheWorkloadInTheMemberAndPlacesItElsewhere:
// `unjoin cluster3 --cascade=orphan` removes the cluster and leaves its
// copy of a Duplicated workload running there, as Karmada leaves what a
// deleted Cluster held; the other members keep theirs, get work no longer
// lists cluster3, and joined again cluster3 keeps the same copy (its UID
// unchanged: nothing deleted it on the way).
func TestUnjoinOrphanLeavesTheWorkloadInTheMemberAndPlacesItElsewhere(t *testing.T) {
	s := newSystem(t)
	ns := uniqueNS("orphan")
	t.Cleanup(func() { s.halt(); s.deleteNamespace(ns) })
	s.startAll()
	s.joinAll()
	s.applyYAML("orphan.yaml", fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: kept, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: kept}}
  template:
    metadata: {labels: {app: kept}}
    spec: {containers: [{name: c, image: nginx:1.25.3, resources: {requests: {cpu: 10m}}}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: kept, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: kept}]
  placement: {replicaScheduling: {replicaSchedulingType: Duplicated}}
`, ns))
	expectMembers(s, "kept in every member", ns, "kept", map[string]int32{"cluster1": 1, "cluster2": 1, "cluster3": 1})
	uid := func() string {
		d, err := s.member("cluster3").AppsV1().Deployments(ns).Get(context.Background(), "kept", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("kept in cluster3: %v", err)
		}
		return string(d.UID)
	}
	first := uid()

	s.mustCLI("unjoin", "cluster3", "--cascade=orphan", "--yes")
	eventually(t, 30*time.Second, "get work without cluster3", func() error {
		if out := s.mustCLI("get", "work", "-n", ns); strings.Contains(out, "cluster3") || !strings.Contains(out, "cluster1") {
			return fmt.Errorf("%s", out)
		}
		return nil
	})
	time.Sleep(3 * time.Second) // a deletion sent by mistake would have reached the member by now
	expectMembers(s, "kept left running in cluster3, and in the others", ns, "kept", map[string]int32{"cluster1": 1, "cluster2": 1, "cluster3": 1})
	if now := uid(); now != first {
		t.Fatalf("kept in cluster3 was deleted and created again by the unjoin (UID %s, then %s)", first, now)
	}

	s.joinAll()
	time.Sleep(3 * time.Second) // the new worker has read the placements
	expectMembers(s, "kept still in cluster3 after it joined again", ns, "kept", map[string]int32{"cluster1": 1, "cluster2": 1, "cluster3": 1})
	if now := uid(); now != first {
		t.Errorf("kept in cluster3 was deleted and created again when it joined again (UID %s, then %s)", first, now)
	}
}
