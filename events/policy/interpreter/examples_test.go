package interpreter

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/flotilla-io/flotilla/events/policy"
)

// The shipped interpreters of examples/: each script on the sample
// object and on member objects shaped as each operator reports them.

// exampleScripts merges the customization of one examples/ folder.
func exampleScripts(t *testing.T, dir string) *policy.Interpretation {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../../examples", dir, "customization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ric policy.ResourceInterpreterCustomization
	if err := yaml.Unmarshal(raw, &ric); err != nil {
		t.Fatal(err)
	}
	return policy.Merge([]policy.ResourceInterpreterCustomization{ric}, ric.Spec.Target.APIVersion, ric.Spec.Target.Kind)
}

// exampleObject reads the first document of kind in an examples/ file.
func exampleObject(t *testing.T, dir, file string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../../../examples", dir, file))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(strings.Split(string(raw), "\n---\n")[0]), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func requests(kv ...string) *policy.ComponentRequirements {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = mustQuantity(kv[i+1])
	}
	return &policy.ComponentRequirements{ResourceRequest: l}
}

func TestShippedComponents(t *testing.T) {
	cases := []struct {
		name, dir, file string
		edit            func(map[string]any)
		want            []policy.Component
	}{
		{"RayCluster: the head and each worker group with its pods' requests", "ray-cluster", "raycluster.yaml", nil, []policy.Component{
			{Name: "head", Replicas: 1, ReplicaRequirements: requests("cpu", "2", "memory", "8Gi")},
			{Name: "cpu", Replicas: 4, ReplicaRequirements: requests("cpu", "4", "memory", "16Gi")},
			{Name: "gpu", Replicas: 2, ReplicaRequirements: requests("cpu", "8", "memory", "32Gi")},
		}},
		{"RayCluster: a suspended worker group has no pods", "ray-cluster", "raycluster.yaml", func(o map[string]any) {
			o["spec"].(map[string]any)["workerGroupSpecs"].([]any)[1].(map[string]any)["suspend"] = true
		}, []policy.Component{
			{Name: "head", Replicas: 1, ReplicaRequirements: requests("cpu", "2", "memory", "8Gi")},
			{Name: "cpu", Replicas: 4, ReplicaRequirements: requests("cpu", "4", "memory", "16Gi")},
			{Name: "gpu", Replicas: 0, ReplicaRequirements: requests("cpu", "8", "memory", "32Gi")},
		}},
		{"RayJob: its cluster and the submitter", "ray-job", "rayjob.yaml", nil, []policy.Component{
			{Name: "head", Replicas: 1, ReplicaRequirements: requests("cpu", "2", "memory", "8Gi")},
			{Name: "workers", Replicas: 3, ReplicaRequirements: requests("cpu", "8", "memory", "16Gi")},
			{Name: "submitter", Replicas: 1, ReplicaRequirements: requests("cpu", "500m", "memory", "512Mi")},
		}},
		{"RayJob: on an existing cluster only the submitter", "ray-job", "rayjob.yaml", func(o map[string]any) {
			o["spec"].(map[string]any)["clusterSelector"] = map[string]any{"ray.io/cluster": "shared"}
		}, []policy.Component{{Name: "submitter", Replicas: 1, ReplicaRequirements: requests("cpu", "500m", "memory", "512Mi")}}},
		{"FlinkDeployment: Flink's 2048m and 8g are mebibytes and gibibytes; 12 parallelism over 4 slots is 3 task managers", "flink-deployment", "flinkdeployment.yaml", nil, []policy.Component{
			{Name: "jobmanager", Replicas: 2, ReplicaRequirements: requests("cpu", "1", "memory", "2048Mi")},
			{Name: "taskmanager", Replicas: 3, ReplicaRequirements: requests("cpu", "4", "memory", "8Gi")},
		}},
		{"FlinkDeployment: taskManager.replicas wins over the parallelism", "flink-deployment", "flinkdeployment.yaml", func(o map[string]any) {
			o["spec"].(map[string]any)["taskManager"].(map[string]any)["replicas"] = 5.0
		}, []policy.Component{
			{Name: "jobmanager", Replicas: 2, ReplicaRequirements: requests("cpu", "1", "memory", "2048Mi")},
			{Name: "taskmanager", Replicas: 5, ReplicaRequirements: requests("cpu", "4", "memory", "8Gi")},
		}},
		{"PyTorchJob: the master and the workers", "pytorch-job", "pytorchjob.yaml", nil, []policy.Component{
			{Name: "master", Replicas: 1, ReplicaRequirements: requests("cpu", "6", "memory", "24Gi")},
			{Name: "worker", Replicas: 4, ReplicaRequirements: requests("cpu", "6", "memory", "24Gi")},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := exampleObject(t, c.dir, c.file)
			if c.edit != nil {
				c.edit(obj)
			}
			got, err := New().Components(exampleScripts(t, c.dir).ComponentResource, obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got, quantityCmp); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestShippedStatusAndHealth(t *testing.T) {
	cases := []struct {
		name, dir   string
		member      map[string]any // the member object's status
		wantHealthy bool
		wantStatus  map[string]any // aggregated over this one member
	}{
		{"RayCluster: ready", "ray-cluster", map[string]any{"state": "ready", "readyWorkerReplicas": 6.0, "availableWorkerReplicas": 6.0, "desiredWorkerReplicas": 6.0, "head": map[string]any{"podIP": "10.0.0.1"}},
			true, map[string]any{"state": "ready", "readyWorkerReplicas": 6.0, "availableWorkerReplicas": 6.0, "desiredWorkerReplicas": 6.0}},
		{"RayCluster: not ready yet", "ray-cluster", map[string]any{"readyWorkerReplicas": 2.0}, false,
			map[string]any{"readyWorkerReplicas": 2.0, "availableWorkerReplicas": 0.0, "desiredWorkerReplicas": 0.0}},
		{"RayJob: running", "ray-job", map[string]any{"jobStatus": "RUNNING", "jobDeploymentStatus": "Running", "rayClusterName": "batch-inference-abc"}, true,
			map[string]any{"jobStatus": "RUNNING", "jobDeploymentStatus": "Running", "rayClusterName": "batch-inference-abc"}},
		{"RayJob: failed", "ray-job", map[string]any{"jobStatus": "FAILED", "jobDeploymentStatus": "Complete"}, false,
			map[string]any{"jobStatus": "FAILED", "jobDeploymentStatus": "Complete"}},
		{"FlinkDeployment: running", "flink-deployment", map[string]any{"lifecycleState": "STABLE", "jobManagerDeploymentStatus": "READY", "jobStatus": map[string]any{"state": "RUNNING", "jobName": "clickstream"}}, true,
			map[string]any{"lifecycleState": "STABLE", "jobManagerDeploymentStatus": "READY", "jobStatus": map[string]any{"state": "RUNNING", "jobName": "clickstream"}}},
		{"FlinkDeployment: the job failed", "flink-deployment", map[string]any{"lifecycleState": "FAILED", "jobManagerDeploymentStatus": "READY", "jobStatus": map[string]any{"state": "FAILED"}}, false,
			map[string]any{"lifecycleState": "FAILED", "jobManagerDeploymentStatus": "READY", "jobStatus": map[string]any{"state": "FAILED"}}},
		{"PyTorchJob: running", "pytorch-job", map[string]any{"conditions": []any{map[string]any{"type": "Running", "status": "True"}},
			"replicaStatuses": map[string]any{"Master": map[string]any{"active": 1.0}, "Worker": map[string]any{"active": 4.0}}}, true,
			map[string]any{"conditions": []any{map[string]any{"type": "Running", "status": "True"}},
				"replicaStatuses": map[string]any{"Master": map[string]any{"active": 1.0, "succeeded": 0.0, "failed": 0.0}, "Worker": map[string]any{"active": 4.0, "succeeded": 0.0, "failed": 0.0}}}},
		{"PyTorchJob: failed", "pytorch-job", map[string]any{"conditions": []any{map[string]any{"type": "Failed", "status": "True"}}}, false,
			map[string]any{"conditions": []any{map[string]any{"type": "Failed", "status": "True"}}}},
	}
	files := map[string]string{"ray-cluster": "raycluster.yaml", "ray-job": "rayjob.yaml", "flink-deployment": "flinkdeployment.yaml", "pytorch-job": "pytorchjob.yaml"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scripts := exampleScripts(t, c.dir)
			member := exampleObject(t, c.dir, files[c.dir])
			member["status"] = c.member
			vm := New()
			healthy, err := vm.Health(scripts.Health, member)
			if err != nil {
				t.Fatal(err)
			}
			if healthy != c.wantHealthy {
				t.Errorf("healthy = %v, want %v", healthy, c.wantHealthy)
			}
			reflected, err := vm.ReflectStatus(scripts.StatusReflection, member)
			if err != nil {
				t.Fatal(err)
			}
			got, err := vm.AggregateStatus(scripts.StatusAggregation, exampleObject(t, c.dir, files[c.dir]),
				[]StatusItem{{ClusterName: "cluster2", Status: reflected, Applied: true, Health: "Healthy"}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.wantStatus, got); diff != "" {
				t.Errorf("aggregated status (-want +got):\n%s", diff)
			}
		})
	}
}

var quantityCmp = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
