package core_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/simulate"
)

// featureScenarios are the worked examples of reference features §6 for
// workload affinity (§1), schedule priority (§2) and FederatedResourceQuota
// (§4), as examples/ folders plus what a scenario adds.
func featureScenarios() []scenario {
	example := func(dir string) string { return filepath.Join(examples, dir) }
	local := func(dir, file string) string { return filepath.Join(scenarioDir, dir, file) }
	const affinityReason = "WorkloadAffinity: ResourceBinding with the same affinity group does not target this cluster"
	const antiReason = "WorkloadAntiAffinity: cluster already has workload with the same anti-affinity group"
	return []scenario{
		{
			name:   "workload affinity follows the placed peer's cluster and anti-affinity avoids it; another namespace and an absent label change nothing",
			dir:    "workload-affinity",
			inputs: []string{example("workload-affinity"), local("workload-affinity", "bindings.yaml")},
			check: func(t *testing.T, o output, _ map[string]clusterFacts) {
				for _, name := range []string{"web", "api"} {
					r := result(t, o, name)
					wantPlaced(t, r, "cluster2", []string{"cluster2"})
					wantDiagnosis(t, r, "cluster1", affinityReason)
				}
				wantPlaced(t, result(t, o, "static"), "", []string{"cluster1", "cluster2", "cluster3"})
				a, b := result(t, o, "redis-a"), result(t, o, "redis-b")
				wantDiagnosis(t, a, "cluster1", antiReason)
				if len(a.Clusters) != 1 || len(b.Clusters) != 1 || a.Clusters[0].Name == b.Clusters[0].Name || b.Clusters[0].Name == "cluster1" {
					t.Errorf("redis-a on %v and redis-b on %v: want two clusters, neither cluster1", a.Clusters, b.Clusters)
				}
			},
		},
		{
			name:   "the higher schedule priority takes the quota's last room whatever the input order; a missing PriorityClass leaves its template unscheduled",
			dir:    "schedule-priority",
			inputs: []string{example("schedule-priority")},
			check: func(t *testing.T, o output, _ map[string]clusterFacts) {
				if r := result(t, o, "invoice-run"); !r.Scheduled {
					t.Errorf("invoice-run (business-critical) not scheduled: %s", r.Error)
				}
				wantRefused(t, result(t, o, "nightly-report"), "QuotaExceeded: FederatedResourceQuota(jobs/jobs-quota) exceeded for resource cpu: requested sum 4, limit 2.")
				wantRefused(t, result(t, o, "audit"), `PriorityClass "busines-critical" named by spec.schedulePriority.priorityClassName does not exist`)
			},
		},
		{
			name:   "a quota admits the first Deployment and refuses the second with Karmada's message, a placed binding's usage counted",
			dir:    "federated-quota",
			inputs: []string{example("federated-quota"), local("federated-quota", "bindings.yaml")},
			check: func(t *testing.T, o output, _ map[string]clusterFacts) {
				if r := result(t, o, "api"); !r.Scheduled {
					t.Errorf("api not scheduled: %s", r.Error)
				}
				wantRefused(t, result(t, o, "worker"), "QuotaExceeded: FederatedResourceQuota(team-a/team-a-quota) exceeded for resource cpu: requested sum 4, limit 3.")
			},
		},
		{
			name:   "a quota's status.overallUsed is its usage before the input",
			dir:    "federated-quota-used",
			inputs: []string{example("federated-quota"), local("federated-quota-used", "used.yaml")},
			check: func(t *testing.T, o output, _ map[string]clusterFacts) {
				wantRefused(t, result(t, o, "api"), "QuotaExceeded: FederatedResourceQuota(team-a/team-a-quota) exceeded for resource cpu: requested sum 4500m, limit 3.")
				wantRefused(t, result(t, o, "worker"), "QuotaExceeded: FederatedResourceQuota(team-a/team-a-quota) exceeded for resource cpu: requested sum 4, limit 3.")
			},
		},
	}
}

func result(t *testing.T, o output, name string) simulate.Result {
	t.Helper()
	for _, r := range o.Results {
		if r.Resource.Name == name && r.Resource.Kind == "Deployment" {
			return r
		}
	}
	t.Fatalf("no result for Deployment %s", name)
	return simulate.Result{}
}

// wantPlaced checks the feasible clusters and, when cluster is given, that
// the whole placement is there.
func wantPlaced(t *testing.T, r simulate.Result, cluster string, feasible []string) {
	t.Helper()
	if !r.Scheduled || strings.Join(r.Feasible, ",") != strings.Join(feasible, ",") {
		t.Errorf("%s: scheduled %v, feasible %v; want scheduled on %v", r.Resource.Name, r.Scheduled, r.Feasible, feasible)
	}
	if cluster != "" && (len(r.Clusters) != 1 || r.Clusters[0].Name != cluster) {
		t.Errorf("%s placed on %v, want %s", r.Resource.Name, r.Clusters, cluster)
	}
}

func wantDiagnosis(t *testing.T, r simulate.Result, cluster, reason string) {
	t.Helper()
	if got := strings.Join(r.Diagnosis[cluster], "; "); got != reason {
		t.Errorf("%s: diagnosis of %s %q, want %q", r.Resource.Name, cluster, got, reason)
	}
}

func wantRefused(t *testing.T, r simulate.Result, err string) {
	t.Helper()
	if r.Scheduled || len(r.Clusters) != 0 || r.Error != err {
		t.Errorf("%s: scheduled %v on %v with error %q; want unscheduled, no clusters, error %q", r.Resource.Name, r.Scheduled, r.Clusters, r.Error, err)
	}
}
