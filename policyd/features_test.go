package policyd

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Reference features §1.2 and §2.2: the binding carries the groups the
// template's labels give under its policy's workloadAffinity, and the
// value of the PriorityClass its schedulePriority names; a missing class
// is recorded (Karmada creates no binding), and the class applied later
// binds the template with its value.
func TestBindingsCarryWorkloadAffinityGroupsAndSchedulePriority(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", zap.NewNop())
	ctx := context.Background()
	for _, doc := range []string{deployment, `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: p, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: high}
  placement:
    workloadAffinity:
      affinity: {groupByLabelKey: app}
      antiAffinity: {groupByLabelKey: tier}
`} {
		if err := h.Handle(ctx, applied(t, doc)); err != nil {
			t.Fatal(err)
		}
	}
	type got struct {
		Groups   *policy.WorkloadAffinityGroups
		Priority int32
		Error    string
	}
	last := func() got {
		bs := bindings(rec)
		b := bs[len(bs)-1]
		return got{b.WorkloadAffinityGroups, b.SchedulePriority, b.PriorityError}
	}
	// app is a label of the template, tier is not: only the affinity group.
	want := got{Groups: &policy.WorkloadAffinityGroups{AffinityGroup: "app=my-app"},
		Error: `PriorityClass "high" named by spec.schedulePriority.priorityClassName does not exist`}
	if diff := cmp.Diff(want, last()); diff != "" {
		t.Fatalf("before the PriorityClass (-want +got):\n%s", diff)
	}
	if err := h.Handle(ctx, applied(t, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n")); err != nil {
		t.Fatal(err)
	}
	want = got{Groups: want.Groups, Priority: 1000}
	if diff := cmp.Diff(want, last()); diff != "" {
		t.Errorf("after the PriorityClass (-want +got):\n%s", diff)
	}
	var b events.Binding
	if bs := bindings(rec); len(bs) != 2 {
		t.Errorf("want two bindings (with the error, then with the value), got %d", len(bs))
	} else {
		b = bs[1]
	}
	if b.Revision != 2 {
		t.Errorf("revision %d, want 2", b.Revision)
	}
}
