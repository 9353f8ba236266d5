package mirror

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/readmodel"
)

// onTwo is a template of key placed on cluster1 and cluster2 (Duplicated),
// with the members' reflected statuses (nil: not reported yet).
func onTwo(key events.ObjectKey, cluster1, cluster2 map[string]any) readmodel.Template {
	p := events.PlacementDecision{Key: key, Generation: 1, Scheduled: true,
		Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 1}, {Name: "cluster2", Replicas: 1}}}
	var work []events.WorkStatus
	for _, w := range []struct {
		cluster string
		status  map[string]any
	}{{"cluster1", cluster1}, {"cluster2", cluster2}} {
		if w.status != nil {
			work = append(work, events.WorkStatus{Key: key, Cluster: w.cluster, Generation: 1, Phase: events.WorkRunning, Status: w.status})
		}
	}
	return readmodel.Fleet{Decisions: []events.PlacementDecision{p}, Work: readmodel.Work{Items: work}}.Template(key)
}

// job is a member Job's reflected status; conditions are type:time pairs
// of True conditions.
func job(active, succeeded, failed float64, start, completion string, conditions ...string) map[string]any {
	st := map[string]any{"active": active, "succeeded": succeeded, "failed": failed, "startTime": start}
	if completion != "" {
		st["completionTime"] = completion
	}
	var conds []any
	for i := 0; i+1 < len(conditions); i += 2 {
		conds = append(conds, map[string]any{"type": conditions[i], "status": "True", "lastTransitionTime": conditions[i+1]})
	}
	if conds != nil {
		st["conditions"] = conds
	}
	return st
}

// checkStatus checks the status hubd writes on hub for t, the bus holding
// the hub's template.
func checkStatus(t *testing.T, hub map[string]any, tmpl readmodel.Template, want map[string]any, wantOK bool) {
	t.Helper()
	got, ok := TemplateStatus(hub, tmpl, true)
	if ok != wantOK {
		t.Fatalf("ok = %v, want %v", ok, wantOK)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func trueCondition(typ, reason, message, at string) map[string]any {
	return map[string]any{"type": typ, "status": "True", "reason": reason, "message": message, "lastTransitionTime": at, "lastProbeTime": at}
}

func TestJobStatusAggregatesAsKarmadasDefaultInterpreter(t *testing.T) {
	key := events.KeyOf("batch/v1", "Job", "default", "report")
	const t0, t1, t2, t3 = "2026-12-01T20:00:00Z", "2026-12-01T20:00:05Z", "2026-12-01T20:01:00Z", "2026-12-01T20:02:00Z"
	completed := trueCondition("Complete", "Completed", "Job completed", t3)
	criteria := trueCondition("SuccessCriteriaMet", "Completed", "Job completed", t3)
	cases := []struct {
		name   string
		hub    map[string]any
		t      readmodel.Template
		want   map[string]any
		wantOK bool
	}{
		{"both members completed: counts summed, the earliest start, the latest completion, Complete", nil,
			onTwo(key, job(0, 1, 0, t1, t2, "Complete", t2), job(0, 2, 1, t0, t3, "Complete", t3)),
			map[string]any{"succeeded": int64(3), "failed": int64(1), "startTime": t0, "completionTime": t3,
				"conditions": []any{criteria, completed}}, true},
		{"one member still runs: no completion yet", nil,
			onTwo(key, job(0, 1, 0, t1, t2, "Complete", t2), job(1, 0, 0, t0, "")),
			map[string]any{"active": int64(1), "succeeded": int64(1), "startTime": t0}, true},
		{"a target that has not reported keeps the Job from completing", nil,
			onTwo(key, job(0, 1, 0, t1, t2, "Complete", t2), nil),
			map[string]any{"succeeded": int64(1), "startTime": t1}, true},
		{"a member failed while another runs: FailureTarget, not yet Failed (the API refuses a failed Job with active pods)", nil,
			onTwo(key, job(0, 0, 6, t1, "", "Failed", t2), job(1, 0, 0, t0, "")),
			map[string]any{"active": int64(1), "failed": int64(6), "startTime": t0, "conditions": []any{
				trueCondition("FailureTarget", "JobFailed", "Job executed failed in member clusters cluster1", t2)}}, true},
		{"a member failed and the other completed: Failed naming the member, never Complete", nil,
			onTwo(key, job(0, 0, 6, t1, "", "Failed", t2), job(0, 1, 0, t0, t3, "Complete", t3)),
			map[string]any{"succeeded": int64(1), "failed": int64(6), "startTime": t0, "conditions": []any{
				trueCondition("FailureTarget", "JobFailed", "Job executed failed in member clusters cluster1", t2),
				trueCondition("Failed", "JobFailed", "Job executed failed in member clusters cluster1", t2)}}, true},
		{"the hub already holds a startTime: it is kept (the API refuses to change it)", map[string]any{"startTime": t1},
			onTwo(key, job(1, 0, 0, t1, ""), job(1, 0, 0, t0, "")),
			map[string]any{"active": int64(2), "startTime": t1}, true},
		{"the hub's Job is finished: never updated again", map[string]any{"conditions": []any{map[string]any{"type": "Complete", "status": "True"}}},
			onTwo(key, job(1, 0, 0, t1, ""), job(1, 0, 0, t0, "")), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkStatus(t, hubObject("batch/v1", "Job", c.hub), c.t, c.want, c.wantOK)
		})
	}
}

func TestServiceStatusConcatenatesTheMembersLoadBalancerIngress(t *testing.T) {
	key := events.KeyOf("v1", "Service", "default", "web")
	lb := func(ingress ...any) map[string]any {
		return map[string]any{"loadBalancer": map[string]any{"ingress": ingress}}
	}
	ip := func(ip string) map[string]any { return map[string]any{"ip": ip} }
	cases := []struct {
		name   string
		typ    string
		t      readmodel.Template
		want   map[string]any
		wantOK bool
	}{
		{"each member's ingress in cluster order, named after its cluster when it has no hostname", "LoadBalancer",
			onTwo(key, lb(ip("10.0.0.1"), map[string]any{"hostname": "lb.example.com"}), lb(ip("10.0.1.1"))),
			lb(map[string]any{"ip": "10.0.0.1", "hostname": "cluster1"}, map[string]any{"hostname": "lb.example.com"},
				map[string]any{"ip": "10.0.1.1", "hostname": "cluster2"}), true},
		{"no member has an ingress yet: an empty load balancer", "LoadBalancer",
			onTwo(key, map[string]any{"loadBalancer": map[string]any{}}, nil),
			map[string]any{"loadBalancer": map[string]any{}}, true},
		{"a ClusterIP Service keeps its status", "ClusterIP", onTwo(key, lb(ip("10.0.0.1")), nil), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hub := hubObject("v1", "Service", nil)
			hub["spec"] = map[string]any{"type": c.typ}
			checkStatus(t, hub, c.t, c.want, c.wantOK)
		})
	}
}

func TestPodStatusTakesTheMostPressingPhaseOfTheMembers(t *testing.T) {
	key := events.KeyOf("v1", "Pod", "default", "probe")
	running := map[string]any{"running": map[string]any{"startedAt": "2026-12-01T20:00:00Z"}}
	pod := func(phase string, ready bool) map[string]any {
		return map[string]any{"phase": phase, "podIP": "10.244.0.9", "containerStatuses": []any{
			map[string]any{"name": "app", "ready": ready, "image": "nginx", "restartCount": float64(0), "state": running}}}
	}
	app := func(ready bool) any { return map[string]any{"name": "app", "ready": ready, "state": running} }
	cases := []struct {
		name string
		t    readmodel.Template
		want map[string]any
	}{
		{"every member runs it: Running, both members' containers", onTwo(key, pod("Running", true), pod("Running", true)),
			map[string]any{"phase": "Running", "containerStatuses": []any{app(true), app(true)}}},
		{"one Succeeded, one Running: Running", onTwo(key, pod("Succeeded", false), pod("Running", true)),
			map[string]any{"phase": "Running", "containerStatuses": []any{app(false), app(true)}}},
		{"every member's Pod succeeded: Succeeded", onTwo(key, pod("Succeeded", false), pod("Succeeded", false)),
			map[string]any{"phase": "Succeeded", "containerStatuses": []any{app(false), app(false)}}},
		{"a failed member outweighs a pending one: Failed", onTwo(key, pod("Failed", false), pod("Pending", false)),
			map[string]any{"phase": "Failed", "containerStatuses": []any{app(false), app(false)}}},
		{"a member that has not reported counts as Pending", onTwo(key, pod("Running", true), nil),
			map[string]any{"phase": "Pending", "containerStatuses": []any{app(true)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkStatus(t, hubObject("v1", "Pod", nil), c.t, c.want, true)
		})
	}
}
