package interpreter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events/policy"
)

// The reference's made-up acme.dev/v1 Worker (features §7.1), one script
// per operation.
const (
	workerReplicas   = `function GetReplicas(o) return o.spec.size or 0, {resourceRequest = {cpu = "250m"}} end`
	workerComponents = `function GetComponents(o) return {{name = "lead", replicas = 1}, {name = "work", replicas = o.spec.size or 0}} end`
	workerRevise     = `function ReviseReplica(o, n) o.spec.size = n; return o end`
	workerRetain     = `function Retain(d, m) d.spec.paused = m.spec.paused; return d end`
	workerReflect    = `function ReflectStatus(m) return {ready = m.status and m.status.ready} end`
	workerAggregate  = `function AggregateStatus(d, items) local r = 0
  for _, it in ipairs(items or {}) do r = r + ((it.status or {}).ready or 0) end
  d.status = {ready = r}; return d end`
	workerHealth = `function InterpretHealth(m) return m.status ~= nil and (m.status.ready or 0) >= (m.spec.size or 0) end`
	workerDeps   = `function GetDependencies(o) if not o.spec.configName then return {} end
  return {{apiVersion = "v1", kind = "ConfigMap", namespace = o.metadata.namespace, name = o.spec.configName}} end`
)

// failedAs checks err against want: with want "", err must be nil and
// failedAs is false; else err must contain want and failedAs is true.
func failedAs(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one containing %q", err, want)
	}
	return true
}

func worker(spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "acme.dev/v1", "kind": "Worker",
		"metadata": map[string]any{"name": "w", "namespace": "team"}, "spec": spec}
}

func TestReplicas(t *testing.T) {
	cpu := resource.MustParse("250m")
	cases := []struct {
		name, script string
		obj          map[string]any
		want         int32
		wantReq      *policy.ReplicaRequirements
		wantErr      string
	}{
		{"the Worker's size and one replica's cpu are read", workerReplicas, worker(map[string]any{"size": 3.0}), 3,
			&policy.ReplicaRequirements{ResourceRequest: corev1.ResourceList{"cpu": cpu}}, ""},
		{"a fraction is truncated", `function GetReplicas(o) return 2.7, nil end`, worker(nil), 2, nil, ""},
		{"nil requirements stay nil", `function GetReplicas(o) return 4 end`, worker(nil), 4, nil, ""},
		{"an empty table gives empty requirements, still a workload", `function GetReplicas(o) return 0, {} end`, worker(nil), 0,
			&policy.ReplicaRequirements{}, ""},
		{"nil replicas are an error", `function GetReplicas(o) return nil end`, worker(nil), 0, nil,
			"InterpretReplica: expect the returned replica type is number, but got nil"},
		{"a string for requirements is an error", `function GetReplicas(o) return 1, "x" end`, worker(nil), 0, nil,
			"InterpretReplica: expect the returned requires type is table, but got string"},
		{"a missing function is named", `function Replicas(o) return 1 end`, worker(nil), 0, nil,
			"InterpretReplica: not found function GetReplicas"},
		{"a runtime error is the script's message", `function GetReplicas(o) return o.spec.missing.size end`, worker(map[string]any{}), 0, nil,
			"attempt to index a non-table object(nil)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A fresh VM: pooled states keep the globals of earlier
			// scripts (TestPooledStatesKeepGlobals).
			n, req, err := New().Replicas(c.script, c.obj)
			if failedAs(t, err, c.wantErr) {
				return
			}
			if diff := cmp.Diff(c.want, n); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.wantReq, req); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComponents(t *testing.T) {
	cases := []struct {
		name, script string
		want         []policy.Component
		wantErr      string
	}{
		{"the Worker's lead and workers", workerComponents, []policy.Component{{Name: "lead", Replicas: 1}, {Name: "work", Replicas: 5}}, ""},
		{"nil is no components", `function GetComponents(o) return nil end`, nil, ""},
		{"requirements come through", `function GetComponents(o) return {{name = "a", replicas = 2, replicaRequirements = {resourceRequest = {cpu = "1"}}}} end`,
			[]policy.Component{{Name: "a", Replicas: 2, ReplicaRequirements: &policy.ComponentRequirements{ResourceRequest: corev1.ResourceList{"cpu": resource.MustParse("1")}}}}, ""},
		{"fractional component replicas are an error", `function GetComponents(o) return {{name = "a", replicas = 1.5}} end`, nil,
			"InterpretComponent: the returned components are not a list"},
		{"a number is an error", `function GetComponents(o) return 3 end`, nil,
			"InterpretComponent: expect the returned components type is table, but got number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Default().Components(c.script, worker(map[string]any{"size": 5.0}))
			if failedAs(t, err, c.wantErr) {
				return
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReviseAndRetain(t *testing.T) {
	t.Run("revise writes the member's count and keeps the input's empty tables", func(t *testing.T) {
		obj := worker(map[string]any{"size": 9.0, "labels": map[string]any{}, "args": []any{}})
		got, err := Default().Revise(workerRevise, obj, 4)
		if err != nil {
			t.Fatal(err)
		}
		want := worker(map[string]any{"size": 4.0, "labels": map[string]any{}, "args": []any{}})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("an empty table the input did not have is deleted", func(t *testing.T) {
		got, err := Default().Revise(`function ReviseReplica(o, n) o.spec.size = n; o.spec.extra = {}; return o end`, worker(map[string]any{}), 2)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(worker(map[string]any{"size": 2.0}), got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("retain keeps the member's field and the member's empty tables", func(t *testing.T) {
		desired := worker(map[string]any{"size": 2.0})
		observed := worker(map[string]any{"size": 2.0, "paused": true, "notes": map[string]any{}})
		got, err := Default().Retain(`function Retain(d, m) d.spec.paused = m.spec.paused; d.spec.notes = m.spec.notes; return d end`, desired, observed)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(worker(map[string]any{"size": 2.0, "paused": true, "notes": map[string]any{}}), got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("retain returning nil is an error", func(t *testing.T) {
		_, err := Default().Retain(`function Retain(d, m) return nil end`, worker(nil), worker(nil))
		if err == nil || !strings.HasPrefix(err.Error(), "Retain: ") {
			t.Fatalf("err = %v, want a Retain error", err)
		}
	})
}

func TestStatusAndHealth(t *testing.T) {
	member := worker(map[string]any{"size": 2.0})
	member["status"] = map[string]any{"ready": 2.0}
	t.Run("reflect returns the script's table", func(t *testing.T) {
		got, err := Default().ReflectStatus(workerReflect, member)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{"ready": 2.0}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("reflect returning an empty table is an empty status", func(t *testing.T) {
		got, err := Default().ReflectStatus(`function ReflectStatus(m) return {} end`, member)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("reflect returning nil is an error", func(t *testing.T) {
		_, err := Default().ReflectStatus(`function ReflectStatus(m) return nil end`, member)
		if err == nil || !strings.Contains(err.Error(), "InterpretStatus: expect the returned status type is table, but got nil") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("aggregation sums the members and sees them sorted by cluster", func(t *testing.T) {
		items := []StatusItem{
			{ClusterName: "member2", Status: map[string]any{"ready": 1.0}, Applied: true, Health: "Healthy"},
			{ClusterName: "member1", Status: map[string]any{"ready": 2.0}, Applied: true, Health: "Healthy"},
			{ClusterName: "member3", Applied: false},
		}
		script := `function AggregateStatus(d, items) local names = {}
		  for _, it in ipairs(items) do table.insert(names, it.clusterName .. ":" .. tostring(it.applied) .. ":" .. tostring(it.status)) end
		  d.status = {order = table.concat(names, ","), ready = 0}
		  for _, it in ipairs(items) do d.status.ready = d.status.ready + ((it.status or {}).ready or 0) end
		  return d end`
		got, err := Default().AggregateStatus(script, worker(nil), items)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"ready": 3.0}
		if diff := cmp.Diff(want["ready"], got["ready"]); diff != "" {
			t.Errorf("ready (-want +got):\n%s", diff)
		}
		order, _ := got["order"].(string)
		if !strings.HasPrefix(order, "member1:true:table") || !strings.Contains(order, "member3:nil:nil") {
			t.Errorf("order = %q, want member1 first, member3 without applied or status", order)
		}
	})
	t.Run("aggregation with no works gets an empty list", func(t *testing.T) {
		got, err := Default().AggregateStatus(workerAggregate, worker(nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{"ready": 0.0}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	cases := []struct {
		name, script string
		want         bool
		wantErr      string
	}{
		{"ready as many as the size is healthy", workerHealth, true, ""},
		{"fewer ready is unhealthy", `function InterpretHealth(m) return m.status.ready > 5 end`, false, ""},
		{"nil is an error, not unhealthy", `function InterpretHealth(m) return nil end`, false, "InterpretHealth: expect the returned health type is boolean, but got nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Default().Health(c.script, member)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("healthy = %v, want %v", got, c.want)
			}
		})
	}
}

func TestDependencies(t *testing.T) {
	second := `function GetDependencies(o) return {
	  {apiVersion = "v1", kind = "Secret", namespace = "team", name = "s"},
	  {apiVersion = "v1", kind = "ConfigMap", namespace = "team", name = "cfg"},
	  {apiVersion = "v1", kind = "ConfigMap", namespace = "team", labelSelector = {matchLabels = {app = "x"}}}} end`
	cases := []struct {
		name    string
		scripts []string
		want    []Dependency
		wantErr string
	}{
		{"the Worker's ConfigMap", []string{workerDeps}, []Dependency{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "team", Name: "cfg"}}, ""},
		{"every script runs; the union is deduplicated and sorted", []string{workerDeps, second}, []Dependency{
			{APIVersion: "v1", Kind: "ConfigMap", Namespace: "team", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}},
			{APIVersion: "v1", Kind: "ConfigMap", Namespace: "team", Name: "cfg"},
			{APIVersion: "v1", Kind: "Secret", Namespace: "team", Name: "s"},
		}, ""},
		{"nil is an error", []string{`function GetDependencies(o) return nil end`}, nil, "expect the returned dependencies type is table, but got nil"},
		{"a dependency without a name or selector is refused", []string{`function GetDependencies(o) return {{apiVersion = "v1", kind = "Secret"}} end`}, nil,
			"name and labelSelector cannot both be empty"},
		{"a dependency without a kind is refused", []string{`function GetDependencies(o) return {{apiVersion = "v1", name = "x"}} end`}, nil,
			"missing required apiVersion or kind"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Default().Dependencies(c.scripts, worker(map[string]any{"configName": "cfg"}))
			if failedAs(t, err, c.wantErr) {
				return
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
