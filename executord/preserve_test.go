package executord

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/policy"
)

func rule(alias, path string) policy.StatePreservationRule {
	return policy.StatePreservationRule{AliasLabelName: alias, JSONPath: path}
}

func preservation(rules ...policy.StatePreservationRule) *policy.StatePreservation {
	return &policy.StatePreservation{Rules: rules}
}

func TestPreservationRules(t *testing.T) {
	app := func(sp *policy.StatePreservation) *policy.FailoverBehavior {
		return &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{StatePreservation: sp}}
	}
	cluster := func(sp *policy.StatePreservation) *policy.FailoverBehavior {
		return &policy.FailoverBehavior{Cluster: &policy.ClusterFailoverBehavior{StatePreservation: sp}}
	}
	both := func(a, c *policy.StatePreservation) *policy.FailoverBehavior {
		return &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{StatePreservation: a}, Cluster: &policy.ClusterFailoverBehavior{StatePreservation: c}}
	}
	spec := func(failover, placementFailover *policy.FailoverBehavior) *events.Binding {
		return &events.Binding{Spec: &policy.PropagationSpec{Failover: failover, Placement: policy.Placement{Failover: placementFailover}}}
	}
	cases := []struct {
		name string
		b    *events.Binding
		want []policy.StatePreservationRule
	}{
		{"a binding without a policy spec has no rules", &events.Binding{}, nil},
		{"a policy without failover has no rules", spec(nil, nil), nil},
		{"application failover without statePreservation has no rules", spec(app(nil), nil), nil},
		{"application rules are read", spec(app(preservation(rule("jobid", "{.jobID}"))), nil), []policy.StatePreservationRule{rule("jobid", "{.jobID}")}},
		{"cluster rules are read", spec(cluster(preservation(rule("rev", "{.updateRevision}"))), nil), []policy.StatePreservationRule{rule("rev", "{.updateRevision}")}},
		{"both lists are joined, application first",
			spec(both(preservation(rule("jobid", "{.jobID}")), preservation(rule("rev", "{.updateRevision}"))), nil),
			[]policy.StatePreservationRule{rule("jobid", "{.jobID}"), rule("rev", "{.updateRevision}")}},
		{"on an alias both name, the application rule wins",
			spec(both(preservation(rule("state", "{.a}")), preservation(rule("state", "{.c}"), rule("rev", "{.r}"))), nil),
			[]policy.StatePreservationRule{rule("state", "{.a}"), rule("rev", "{.r}")}},
		{"seed 002's placement.failover is read when spec.failover is absent",
			spec(nil, app(preservation(rule("jobid", "{.jobID}")))), []policy.StatePreservationRule{rule("jobid", "{.jobID}")}},
		{"spec.failover wins over placement.failover for the same behaviour",
			spec(app(preservation(rule("jobid", "{.new}"))), app(preservation(rule("jobid", "{.old}")))), []policy.StatePreservationRule{rule("jobid", "{.new}")}},
		{"placement.failover fills in the behaviour spec.failover lacks",
			spec(app(preservation(rule("jobid", "{.jobID}"))), cluster(preservation(rule("rev", "{.r}")))),
			[]policy.StatePreservationRule{rule("jobid", "{.jobID}"), rule("rev", "{.r}")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := preservationRules(c.b); !reflect.DeepEqual(c.want, got) {
				t.Fatalf("want %v, got %v", c.want, got)
			}
		})
	}
	if got := preservationRules(nil); got != nil {
		t.Fatalf("no binding: want no rules, got %v", got)
	}
}

func TestPreservedState(t *testing.T) {
	status := map[string]any{
		"readyReplicas": int64(3), "updateRevision": "web-5d4f", "observedGeneration": int64(1234567890123), "paused": false, "ratio": 0.5, "empty": "",
		"jobStatus":  map[string]any{"jobID": "a1b2c3", "state": "RUNNING"},
		"conditions": []any{map[string]any{"type": "Available", "status": "True"}, map[string]any{"type": "Progressing", "status": "False"}},
	}
	withStatus := obj("Deployment", 1, nil, status)
	cases := []struct {
		name    string
		obj     *unstructured.Unstructured
		rules   []policy.StatePreservationRule
		want    map[string]string
		badPath []string
	}{
		{"no rules, no state", withStatus, nil, nil, nil},
		{"a path in Karmada's form reads a string relative to status", withStatus, []policy.StatePreservationRule{rule("rev", "{ .updateRevision }")}, map[string]string{"rev": "web-5d4f"}, nil},
		{"an integer is written as an integer, however large", withStatus,
			[]policy.StatePreservationRule{rule("ready", "{.readyReplicas}"), rule("gen", "{.observedGeneration}")}, map[string]string{"ready": "3", "gen": "1234567890123"}, nil},
		{"booleans and fractions take their JSON form", withStatus,
			[]policy.StatePreservationRule{rule("paused", "{.paused}"), rule("ratio", "{.ratio}")}, map[string]string{"paused": "false", "ratio": "0.5"}, nil},
		{"a path without braces is wrapped in them", withStatus, []policy.StatePreservationRule{rule("job", ".jobStatus.jobID")}, map[string]string{"job": "a1b2c3"}, nil},
		{"a path without braces or a leading dot names a field of status", withStatus, []policy.StatePreservationRule{rule("ready", "readyReplicas")}, map[string]string{"ready": "3"}, nil},
		{"filters and indexes work as in kubectl", withStatus,
			[]policy.StatePreservationRule{rule("available", `{.conditions[?(@.type=="Available")].status}`), rule("second", "{.conditions[1].type}")},
			map[string]string{"available": "True", "second": "Progressing"}, nil},
		{"a missing field leaves its alias out, the others stay", withStatus,
			[]policy.StatePreservationRule{rule("missing", "{.jobStatus.savepoint}"), rule("job", "{.jobStatus.jobID}"), rule("index", "{.conditions[5].type}")},
			map[string]string{"job": "a1b2c3"}, nil},
		{"an empty string is nothing to preserve", withStatus, []policy.StatePreservationRule{rule("empty", "{.empty}")}, nil, nil},
		{"an object without status has no state", obj("Deployment", 1, nil, nil), []policy.StatePreservationRule{rule("ready", "{.readyReplicas}")}, nil, nil},
		{"a path that does not parse is left out and reported", withStatus,
			[]policy.StatePreservationRule{rule("broken", "{.conditions[}"), rule("rev", "{.updateRevision}"), rule("open", "{.updateRevision")},
			map[string]string{"rev": "web-5d4f"}, []string{"{.conditions[}", "{.updateRevision"}},
		{"a path that is only blanks is reported", withStatus, []policy.StatePreservationRule{rule("blank", "  ")}, nil, []string{"  "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, bad := PreservedState(c.obj, c.rules)
			if !reflect.DeepEqual(c.want, got) {
				t.Fatalf("state: want %v, got %v", c.want, got)
			}
			var badPaths []string
			for _, e := range bad {
				badPaths = append(badPaths, e.Rule.JSONPath)
				if e.Err == nil || !errors.Is(e, e.Err) {
					t.Fatalf("rule error %v carries no cause", e)
				}
			}
			if !reflect.DeepEqual(c.badPath, badPaths) {
				t.Fatalf("unparsable paths: want %q, got %q", c.badPath, badPaths)
			}
		})
	}
}

func TestInjectPreservedLabels(t *testing.T) {
	manifest := func() map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default",
			"labels":{"app":"web","flotilla.io/managed":"true"}},"spec":{"replicas":2}}`), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	evicted := func(cluster string, labels map[string]string, before ...string) events.Eviction {
		return events.Eviction{Cluster: cluster, Reason: events.EvictApplicationFailure, PurgeMode: events.PurgeGracefully, EvictedAt: t0,
			PreservedLabels: labels, ClustersBeforeFailover: before}
	}
	withEvictions := func(evs ...events.Eviction) events.PlacementDecision {
		p := placement(2, 0, on("member1", 2), on("member3", 2))
		p.Evictions = evs
		return p
	}
	base := map[string]string{"app": "web", "flotilla.io/managed": "true"}
	plus := func(kv ...string) map[string]string {
		out := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		name    string
		p       events.PlacementDecision
		cluster string
		want    map[string]string
	}{
		{"without evictions nothing is added", withEvictions(), "member1", base},
		{"a cluster new since the failover gets the preserved labels",
			withEvictions(evicted("member2", map[string]string{"jobid": "a1b2c3"}, "member2", "member3")), "member1", plus("jobid", "a1b2c3")},
		{"a cluster that ran the template before the failover is left alone",
			withEvictions(evicted("member2", map[string]string{"jobid": "a1b2c3"}, "member2", "member3")), "member3", base},
		{"an eviction without preserved labels adds nothing",
			withEvictions(evicted("member2", nil, "member2", "member3")), "member1", base},
		{"an eviction without a list of clusters before the failover counts every cluster as new",
			withEvictions(evicted("member2", map[string]string{"jobid": "a1b2c3"})), "member3", plus("jobid", "a1b2c3")},
		{"several evictions are merged in order, the later one winning on a label",
			withEvictions(
				evicted("member2", map[string]string{"jobid": "first", "savepoint": "s-1"}, "member2"),
				evicted("member4", nil, "member4"),
				evicted("member5", map[string]string{"jobid": "second"}, "member5")),
			"member1", plus("jobid", "second", "savepoint", "s-1")},
		{"only the evictions that did not see this cluster count",
			withEvictions(
				evicted("member2", map[string]string{"jobid": "first"}, "member2"),
				evicted("member5", map[string]string{"jobid": "second"}, "member1", "member5")),
			"member1", plus("jobid", "first")},
		{"a purged eviction still counts: its labels stay until a reschedule forgets it",
			withEvictions(func() events.Eviction {
				ev := evicted("member2", map[string]string{"jobid": "a1b2c3"}, "member2")
				at := t0
				ev.PurgedAt, ev.PurgeReason = &at, "replacement healthy"
				return ev
			}()), "member1", plus("jobid", "a1b2c3")},
		{"a preserved label replaces the template's label of the same name",
			withEvictions(evicted("member2", map[string]string{"app": "web-restored"}, "member2")), "member1", plus("app", "web-restored")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := manifest()
			out := InjectPreservedLabels(in, c.p, c.cluster)
			got := (&unstructured.Unstructured{Object: out}).GetLabels()
			if !reflect.DeepEqual(c.want, got) {
				t.Fatalf("labels: want %v, got %v", c.want, got)
			}
			if !reflect.DeepEqual(manifest(), in) {
				t.Fatal("the rendered manifest was changed in place")
			}
			if out["spec"].(map[string]any)["replicas"] != in["spec"].(map[string]any)["replicas"] {
				t.Fatal("the rest of the manifest was not kept")
			}
		})
	}
	t.Run("a manifest without metadata labels gets them", func(t *testing.T) {
		in := map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}
		out := InjectPreservedLabels(in, withEvictions(evicted("member2", map[string]string{"jobid": "a1b2c3"}, "member2")), "member1")
		if got := (&unstructured.Unstructured{Object: out}).GetLabels(); !reflect.DeepEqual(map[string]string{"jobid": "a1b2c3"}, got) {
			t.Fatalf("labels: got %v", got)
		}
		if _, ok := in["metadata"]; ok {
			t.Fatal("the input was changed in place")
		}
	})
}

// labelsOf are the labels of the member's copy of web.
func (m *fakeMember) labelsOf(t *testing.T) map[string]any {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects["deployments/default/web"]
	if !ok {
		t.Fatal("the member holds no web")
	}
	labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
	return maps.Clone(labels)
}

// preservingPlacement is web's placement with application failover
// statePreservation rules (one of which does not parse).
func preservingPlacement(rev int64, after time.Duration, clusters ...events.TargetCluster) events.PlacementDecision {
	p := placement(rev, after, clusters...)
	p.Binding.Spec = &policy.PropagationSpec{Failover: &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{
		StatePreservation: preservation(rule("rev", "{ .updateRevision }"), rule("broken", "{.conditions[}"))}}}
	return p
}

func TestAPlacementWithPreservedLabelsAppliesThemInANewClusterOnly(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	status := maps.Clone(healthyStatus)
	status["updateRevision"] = "web-5d4f"
	member.setStatus(status)
	clk := &testClock{t: t0}
	core, logs := observer.New(zap.InfoLevel)
	w := newTestWorker(t, newTestDaemon(t, bus, member, clk, prometheus.NewRegistry(), zap.New(core)))

	handle(t, w, preservingPlacement(1, 0, on("member1", 2), on("member2", 2)))
	st, _ := latestWork(t, bus)
	if want := map[string]string{"rev": "web-5d4f"}; !reflect.DeepEqual(want, st.PreservedState) {
		t.Fatalf("preserved state: want %v, got %v", want, st.PreservedState)
	}
	firstHash := st.AppliedHash

	// member2 fails away; member1 ran web before, so it is left alone.
	evicted := func(before ...string) events.PlacementDecision {
		p := preservingPlacement(2, time.Minute, on("member1", 2), on("member3", 2))
		p.Evictions = []events.Eviction{{Cluster: "member2", Reason: events.EvictApplicationFailure, PurgeMode: events.PurgeGracefully, Replicas: 2,
			EvictedAt: t0.Add(time.Minute), PreservedLabels: map[string]string{"jobid": "a1b2c3"}, ClustersBeforeFailover: before}}
		return p
	}
	handle(t, w, evicted("member1", "member2"))
	if applies, _ := member.counts(); applies != 1 {
		t.Fatalf("member saw %d applies, want 1: a cluster that ran web before the failover gets no labels", applies)
	}
	if _, ok := member.labelsOf(t)["jobid"]; ok {
		t.Fatal("the preserved label reached a cluster that ran web before the failover")
	}

	// The same failover seen from a cluster new since then.
	p := evicted("member2", "member3")
	p.DecidedAt = p.DecidedAt.Add(time.Second)
	handle(t, w, p)
	if applies, _ := member.counts(); applies != 2 {
		t.Fatalf("member saw %d applies, want 2: the labels are a new manifest", applies)
	}
	if got := member.labelsOf(t)["jobid"]; got != "a1b2c3" {
		t.Fatalf("label jobid = %v, want a1b2c3", got)
	}
	st, _ = latestWork(t, bus)
	if st.AppliedHash == firstHash || st.Phase != events.WorkRunning {
		t.Fatalf("status %s hash %s, want Running with a new hash", st.Phase, st.AppliedHash)
	}

	// A label removed by hand is drift, and is put back.
	member.mu.Lock()
	delete(member.objects["deployments/default/web"]["metadata"].(map[string]any)["labels"].(map[string]any), "jobid")
	member.mu.Unlock()
	w.resync(context.Background())
	if got := member.labelsOf(t)["jobid"]; got != "a1b2c3" {
		t.Fatalf("label jobid = %v after the resync, want it put back", got)
	}
	if st, _ := latestWork(t, bus); st.Message != "drift repaired: metadata.labels.jobid was changed in the member" {
		t.Fatalf("status message %q, want the drift repair", st.Message)
	}

	// A member that does not answer says nothing new about the values:
	// the Failed status keeps the last ones (schedulerd reads an evicted
	// cluster's values from its last status).
	member.down.Store(true)
	handle(t, w, preservingPlacement(3, 2*time.Minute, on("member1", 3)))
	st, _ = latestWork(t, bus)
	if want := map[string]string{"rev": "web-5d4f"}; st.Phase != events.WorkFailed || !reflect.DeepEqual(want, st.PreservedState) {
		t.Fatalf("status %s preserved state %v, want Failed with %v", st.Phase, st.PreservedState, want)
	}

	if n := logs.FilterMessage("statePreservation jsonPath does not parse, its value is left out").Len(); n != 1 {
		t.Fatalf("the unparsable path was logged %d times, want once", n)
	}
}
