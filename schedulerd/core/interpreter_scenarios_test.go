package core_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/simulate"
)

// interpreterScenarios are reference features §6's multi-component check
// on the shipped interpreters of examples/ (§3, §7), plus a cluster too
// small for one set and a Divided custom resource revised per cluster.
func interpreterScenarios() []scenario {
	example := func(dir string) string { return filepath.Join(examples, dir) }
	local := func(dir, file string) string { return filepath.Join(scenarioDir, dir, file) }
	whole := func(kind, name, cluster string, comps ...policy.ComponentReplicas) func(t *testing.T, o output, _ map[string]clusterFacts) {
		return func(t *testing.T, o output, _ map[string]clusterFacts) {
			r := resultOf(t, o, kind, name)
			if !r.Scheduled {
				t.Fatalf("%s %s not scheduled: %s", kind, name, r.Error)
			}
			want := []simulateCluster{{Name: cluster, Components: comps}}
			if diff := cmp.Diff(want, clustersOf(r)); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", kind, name, diff)
			}
		}
	}
	c := func(name string, n int32) policy.ComponentReplicas {
		return policy.ComponentReplicas{Name: name, Replicas: n}
	}
	return []scenario{
		{
			name:   "a RayCluster goes whole, head and both worker groups, into the one cluster that holds a set",
			dir:    "ray-cluster",
			inputs: []string{example("ray-cluster")},
			check:  whole("RayCluster", "training", "cluster2", c("head", 1), c("cpu", 4), c("gpu", 2)),
		},
		{
			name:   "a RayJob goes whole with its submitter into the cluster with the most sets",
			dir:    "ray-job",
			inputs: []string{example("ray-job")},
			check:  whole("RayJob", "batch-inference", "cluster2", c("head", 1), c("workers", 3), c("submitter", 1)),
		},
		{
			name:   "a FlinkDeployment's job managers and parallelism/slots task managers go whole into one cluster",
			dir:    "flink-deployment",
			inputs: []string{example("flink-deployment")},
			check:  whole("FlinkDeployment", "clickstream", "cluster2", c("jobmanager", 2), c("taskmanager", 3)),
		},
		{
			name:   "a PyTorchJob's master and workers go whole into one cluster, the first by name of two that hold a set",
			dir:    "pytorch-job",
			inputs: []string{example("pytorch-job")},
			check:  whole("PyTorchJob", "resnet", "cluster2", c("master", 1), c("worker", 4)),
		},
		{
			name: "no cluster holds one whole set: not scheduled",
			dir:  "components-no-room",
			inputs: []string{filepath.Join(examples, "ray-cluster", "customization.yaml"), filepath.Join(examples, "ray-cluster", "policy.yaml"),
				filepath.Join(examples, "ray-cluster", "raycluster.yaml"), local("components-no-room", "clusters.yaml")},
			check: func(t *testing.T, o output, _ map[string]clusterFacts) {
				r := resultOf(t, o, "RayCluster", "training")
				if r.Scheduled || r.Error != "no enough resource when selecting 1 clusters" {
					t.Errorf("scheduled %v, error %q; want not scheduled: no enough resource when selecting 1 clusters", r.Scheduled, r.Error)
				}
			},
		},
		{
			name:   "a Divided custom resource is divided by its replicaResource count and each cluster's copy revised to its share",
			dir:    "replica-revision",
			inputs: []string{example("ray-cluster/clusters.yaml"), local("replica-revision", "worker.yaml")},
			check: func(t *testing.T, o output, _ map[string]clusterFacts) {
				r := resultOf(t, o, "Worker", "crawler")
				checkPlacement(t, r, map[string]int32{"cluster1": 6, "cluster2": 2})
				for cluster, want := range map[string]float64{"cluster1": 6, "cluster2": 2} {
					spec, _ := r.Manifests[cluster]["spec"].(map[string]any)
					if spec["size"] != want {
						t.Errorf("%s: spec.size %v, want %v", cluster, spec["size"], want)
					}
					if _, kept := spec["labels"].(map[string]any); !kept {
						t.Errorf("%s: spec.labels (an empty object in the template) lost: %v", cluster, spec)
					}
				}
			},
		},
	}
}

// simulateCluster is a placement entry as the scenarios compare it.
type simulateCluster struct {
	Name       string
	Replicas   int32
	Components []policy.ComponentReplicas
}

func clustersOf(r simulate.Result) []simulateCluster {
	var out []simulateCluster
	for _, c := range r.Clusters {
		out = append(out, simulateCluster{Name: c.Name, Replicas: c.Replicas, Components: c.Components})
	}
	return out
}

func resultOf(t *testing.T, o output, kind, name string) simulate.Result {
	t.Helper()
	for _, r := range o.Results {
		if r.Resource.Name == name && r.Resource.Kind == kind {
			return r
		}
	}
	t.Fatalf("no result for %s %s", kind, name)
	return simulate.Result{}
}
