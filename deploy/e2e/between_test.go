package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// Placement between workloads through the daemons (issue 21; reference
// features §1, §2, §4): policyd derives groups and priorities, schedulerd
// filters by peers, admits by quota and decides waiting work in priority
// order, and `explain` says why a template was refused.

// deploymentYAML is a one-container Deployment of ns with labels and a
// cpu request per replica.
func deploymentYAML(ns, name, labels, cpu string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s, labels: {%[3]s}}
spec:
  replicas: %[5]d
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec: {containers: [{name: c, image: busybox:1.36, resources: {requests: {cpu: "%[4]s"}}}]}
---
`, ns, name, labels, cpu, replicas)
}

// oneClusterPolicy is a policy of ns for Deployments labelled role=<role>,
// placing each in one cluster, with extra spec lines.
func oneClusterPolicy(ns, name, role, extra string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, labelSelector: {matchLabels: {role: %[3]s}}}]
  placement:
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
    spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]
%[4]s---
`, ns, name, role, extra)
}

// placementsOf reads the latest placement of every template of ns.
func (s *system) placementsOf(ns string) (map[string]events.PlacementDecision, error) {
	ps, err := s.decisionsIn(ns)
	if err != nil {
		return nil, err
	}
	byName := map[string]events.PlacementDecision{}
	for _, p := range ps {
		byName[p.Key.Name] = p
	}
	return byName, nil
}

// waitPlacements waits until the placements of ns pass check.
func (s *system) waitPlacements(t *testing.T, ns string, what string, check func(map[string]events.PlacementDecision) error) map[string]events.PlacementDecision {
	t.Helper()
	var got map[string]events.PlacementDecision
	eventually(t, 60*time.Second, what, func() error {
		var err error
		if got, err = s.placementsOf(ns); err != nil {
			return err
		}
		return check(got)
	})
	return got
}

func placedOn(p events.PlacementDecision) string {
	if !p.Scheduled || len(p.Clusters) != 1 {
		return ""
	}
	return p.Clusters[0].Name
}

func TestPlacementBetweenWorkloadsThroughTheDaemons(t *testing.T) {
	s := newSystem(t)
	s.startAll()
	s.joinAll()

	t.Run("two Deployments of one anti-affinity group land in different clusters and two of one affinity group in the same one", func(t *testing.T) {
		ns := uniqueNS("affinity")
		t.Cleanup(func() { s.deleteNamespace(ns) })
		s.applyYAML("affinity.yaml",
			oneClusterPolicy(ns, "apart", "cache", "    workloadAffinity: {antiAffinity: {groupByLabelKey: cache.group}}\n")+
				oneClusterPolicy(ns, "together", "web", "    workloadAffinity: {affinity: {groupByLabelKey: app.group}}\n")+
				deploymentYAML(ns, "cache-a", "role: cache, cache.group: sessions", "100m", 1)+
				deploymentYAML(ns, "cache-b", "role: cache, cache.group: sessions", "100m", 1)+
				deploymentYAML(ns, "web", "role: web, app.group: shop", "100m", 1)+
				deploymentYAML(ns, "api", "role: web, app.group: shop", "100m", 1))
		got := s.waitPlacements(t, ns, "four placements", func(ps map[string]events.PlacementDecision) error {
			for _, n := range []string{"cache-a", "cache-b", "web", "api"} {
				if placedOn(ps[n]) == "" {
					return fmt.Errorf("%s not placed on one cluster: %+v", n, ps[n])
				}
			}
			return nil
		})
		if a, b := placedOn(got["cache-a"]), placedOn(got["cache-b"]); a == b {
			t.Errorf("anti-affinity: cache-a on %s and cache-b on %s, want different clusters", a, b)
		}
		if a, b := placedOn(got["web"]), placedOn(got["api"]); a != b {
			t.Errorf("affinity: web on %s and api on %s, want the same cluster", a, b)
		}
	})

	t.Run("a FederatedResourceQuota lets the first of two Deployments in and refuses the second, with the reason in explain", func(t *testing.T) {
		ns := uniqueNS("quota")
		t.Cleanup(func() { s.deleteNamespace(ns) })
		quota := fmt.Sprintf("apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\nmetadata: {name: team, namespace: %s}\nspec:\n  overall: {cpu: \"2\"}\n---\n", ns)
		s.applyYAML("quota.yaml", quota+oneClusterPolicy(ns, "all", "app", "")+deploymentYAML(ns, "first", "role: app", "1", 2))
		s.waitPlacements(t, ns, "first placed", func(ps map[string]events.PlacementDecision) error {
			if placedOn(ps["first"]) == "" {
				return fmt.Errorf("first: %+v", ps["first"])
			}
			return nil
		})
		s.applyYAML("second.yaml", deploymentYAML(ns, "second", "role: app", "500m", 1))
		want := "QuotaExceeded: FederatedResourceQuota(" + ns + "/team) exceeded for resource cpu: requested sum 2500m, limit 2."
		eventually(t, 60*time.Second, "second refused in explain", func() error {
			out, _, _ := s.cli("explain", "deployment/second", "-n", ns)
			if !strings.Contains(out, "Scheduled:   no: "+want) {
				return fmt.Errorf("%s", out)
			}
			return nil
		})
		if out := s.mustCLI("get", "frq", "-n", ns); !strings.Contains(out, "cpu: 2 ") && !strings.Contains(out, "cpu: 2\n") {
			t.Errorf("get frq: want overallUsed cpu: 2:\n%s", out)
		}
	})

	t.Run("a higher-priority template applied after a lower one takes the last room in a quota", func(t *testing.T) {
		ns := uniqueNS("priority")
		t.Cleanup(func() { s.deleteNamespace(ns) })
		high, low := ns+"-high", ns+"-low"
		classes := fmt.Sprintf("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: 1000\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: %s}\nvalue: 10\n---\n", high, low)
		prio := func(class string) string {
			return fmt.Sprintf("  schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: %s}\n", class)
		}
		quota := fmt.Sprintf("apiVersion: policy.karmada.io/v1alpha1\nkind: FederatedResourceQuota\nmetadata: {name: room, namespace: %s}\nspec:\n  overall: {cpu: \"1\"}\n---\n", ns)
		// The extra lines go under placement; schedulePriority belongs in spec.
		policyWith := func(name, role, class string) string {
			return strings.Replace(oneClusterPolicy(ns, name, role, ""), "  placement:\n", prio(class)+"  placement:\n", 1)
		}
		s.applyYAML("room.yaml", classes+quota+policyWith("filler", "filler", low)+policyWith("low", "low", low)+policyWith("high", "high", high)+
			deploymentYAML(ns, "filler", "role: filler", "1", 1))
		s.waitPlacements(t, ns, "filler placed", func(ps map[string]events.PlacementDecision) error {
			if placedOn(ps["filler"]) == "" {
				return fmt.Errorf("filler: %+v", ps["filler"])
			}
			return nil
		})
		s.applyYAML("low.yaml", deploymentYAML(ns, "low", "role: low", "1", 1))
		s.applyYAML("high.yaml", deploymentYAML(ns, "high", "role: high", "1", 1))
		s.waitPlacements(t, ns, "low and high waiting for room", func(ps map[string]events.PlacementDecision) error {
			for _, n := range []string{"low", "high"} {
				if !strings.HasPrefix(ps[n].Error, "QuotaExceeded: ") {
					return fmt.Errorf("%s: %+v", n, ps[n])
				}
			}
			return nil
		})
		s.mustCLI("delete", "deployment/filler", "-n", ns)
		got := s.waitPlacements(t, ns, "high placed in the freed room", func(ps map[string]events.PlacementDecision) error {
			if placedOn(ps["high"]) == "" {
				return fmt.Errorf("high: %+v", ps["high"])
			}
			return nil
		})
		if p := got["low"]; p.Scheduled || !strings.HasPrefix(p.Error, "QuotaExceeded: ") {
			t.Errorf("low took room too: %+v", p)
		}
	})
}
