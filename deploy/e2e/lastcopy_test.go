package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/schedulerd/failover"
)

// TestFailoverKeepsTheOnlyCopyPastItsGracePeriod is issue 13's "failover
// never deletes the last copy" on the sandbox: a Deployment whose policy
// allows cluster1 only, with application failover (tolerationSeconds 5,
// gracePeriodSeconds 15). cluster1 is stopped; the template is evicted from
// it with nowhere else to go, and its grace period runs out. Karmada would
// purge the copy then (karmada-io/karmada#7455); Flotilla holds it: `get
// work` and `explain` say "kept: no replacement", the placement still keeps
// it, and `flotilla.failover.>` records the eviction and no purge. When
// cluster1 is started again the copy is still there.
func TestFailoverKeepsTheOnlyCopyPastItsGracePeriod(t *testing.T) {
	s := newSystem(t)
	// Registered before the member is made stoppable, so that it runs after
	// a failed test has started cluster1 again: a namespace deleted while
	// cluster1 is down would leave solo's pods there for the next test.
	ns := uniqueNS("lastcopy")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	cluster1 := s.stoppable("cluster1")
	s.startAll()
	s.joinAll()

	s.applyYAML("lastcopy.yaml", fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: solo, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: solo}}
  template:
    metadata: {labels: {app: solo}}
    spec: {containers: [{name: c, image: nginx:1.25.3, resources: {requests: {cpu: 100m}}}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: solo, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: solo}]
  placement:
    clusterAffinity: {clusterNames: [cluster1]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}
  failover:
    application:
      decisionConditions: {tolerationSeconds: 5}
      purgeMode: Gracefully
      gracePeriodSeconds: 15
`, ns))
	expectMembers(s, "solo at 2 in cluster1 only", ns, "solo", map[string]int32{"cluster1": 2, "cluster2": -1, "cluster3": -1})

	stoppedAt := time.Now()
	cluster1.stop()
	var evictedAt time.Time
	eventually(t, 90*time.Second, "the eviction from cluster1 to be held past its 15 s grace period", func() error {
		p, err := s.latestPlacement(ns, "solo")
		if err != nil {
			return err
		}
		if len(p.Evictions) != 1 || p.Evictions[0].Cluster != "cluster1" {
			return fmt.Errorf("placement %s, evictions %+v: want cluster1 evicted", events.FormatTargets(p.Clusters), p.Evictions)
		}
		e := p.Evictions[0]
		if !e.Kept() {
			return fmt.Errorf("the only copy was released: %+v", e)
		}
		if e.Held != failover.HeldNotPlaced {
			return fmt.Errorf("not held yet: %+v", e)
		}
		if p.Scheduled || len(p.Clusters) != 0 {
			return fmt.Errorf("nowhere else may take solo, yet it is placed on %s", events.FormatTargets(p.Clusters))
		}
		evictedAt = e.EvictedAt
		return nil
	})
	t.Logf("solo evicted %s after cluster1 was stopped; its copy held past the grace period", evictedAt.Sub(stoppedAt).Round(time.Second))
	if past := time.Since(evictedAt); past < 15*time.Second {
		t.Fatalf("held only %s after the eviction, before the grace period ended", past)
	}

	work := s.mustCLI("get", "work", "-n", ns, "-o", "wide")
	if !strings.Contains(work, "kept: no replacement") {
		t.Fatalf("get work must say the copy in cluster1 is kept for want of a replacement:\n%s", work)
	}
	explain := s.mustCLI("explain", "deployment/solo", "-n", ns)
	if !strings.Contains(explain, "kept: no replacement") {
		t.Fatalf("explain must say the copy in cluster1 is kept for want of a replacement:\n%s", explain)
	}
	history := s.mustCLI("replay", "--since", "10m", "--subject", "flotilla.failover.>")
	if !strings.Contains(history, "evicted from cluster1") {
		t.Fatalf("the eviction must be on flotilla.failover.>:\n%s", history)
	}
	if strings.Contains(history, string(events.TypeFailoverPurged)) || strings.Contains(history, "released for deletion") {
		t.Fatalf("no purge may be recorded for the only copy:\n%s", history)
	}

	cluster1.start()
	expectMembers(s, "solo's copy still in cluster1 after its return", ns, "solo", map[string]int32{"cluster1": 2})
	if p, err := s.latestPlacement(ns, "solo"); err != nil || len(p.Evictions) != 1 || !p.Evictions[0].Kept() {
		t.Fatalf("the held eviction must stand until a reschedule: %+v (%v)", p.Evictions, err)
	}
}
