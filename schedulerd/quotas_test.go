package schedulerd

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/core"
	"github.com/flotilla-io/flotilla/schedulerd/plugins"
)

func quotaRecord(t *testing.T, ns, name, cpu string) events.ObjectRecord {
	t.Helper()
	q := policy.FederatedResourceQuota{Spec: policy.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}
	raw, err := events.MarshalJSON(q)
	if err != nil {
		t.Fatal(err)
	}
	return events.ObjectRecord{Key: events.KeyOf(policy.PolicyAPIVersion, policy.KindFederatedResourceQuota, ns, name), Role: events.RoleQuota, Object: raw, Generation: 1}
}

func cpuBinding(name string, priority int32, cpu string) events.Binding {
	return events.Binding{Key: events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "team", Name: name}, APIVersion: "apps/v1",
		Generation: 1, Revision: 1, Replicas: 1, SchedulePriority: priority,
		ReplicaRequirements: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}, Spec: &policy.PropagationSpec{}}
}

// Reference features §2.3 and §4.5: work a quota refused waits; when room
// is freed, the waiting work is decided again highest priority first, so a
// higher-priority template that arrived after a lower one takes the room.
func TestFreedQuotaRoomGoesToTheHighestPriorityWaitingTemplate(t *testing.T) {
	rec := &eventstest.Recorder{}
	h := NewHandler(rec, "t", core.New(plugins.DefaultProfile()), nil)
	join(t, h, "cluster1", true)
	ctx := context.Background()
	handle := func(typ events.Type, data any) {
		t.Helper()
		if err := h.Handle(ctx, ev(t, typ, data)); err != nil {
			t.Fatal(err)
		}
	}
	handle(events.TypeObjectAccepted, quotaRecord(t, "team", "q", "2"))
	filler := cpuBinding("filler", 0, "2")
	handle(events.TypeBindingChanged, filler)
	handle(events.TypeBindingChanged, cpuBinding("low", 10, "2"))
	handle(events.TypeBindingChanged, cpuBinding("high", 1000, "2"))
	latest := func() map[string]string {
		out := map[string]string{}
		for _, p := range placements(rec) {
			out[p.Key.Name] = events.FormatTargets(p.Clusters) + " " + p.Error
		}
		return out
	}
	refused := "QuotaExceeded: FederatedResourceQuota(team/q) exceeded for resource cpu: requested sum 4, limit 2."
	if diff := cmp.Diff(map[string]string{"filler": "cluster1=1 ", "low": " " + refused, "high": " " + refused}, latest()); diff != "" {
		t.Fatalf("before the room is freed (-want +got):\n%s", diff)
	}
	handle(events.TypeBindingRemoved, events.Binding{Key: filler.Key, Revision: 2})
	if diff := cmp.Diff(map[string]string{"filler": "cluster1=1 ", "low": " " + refused, "high": "cluster1=1 "}, latest()); diff != "" {
		t.Errorf("after filler is deleted (-want +got):\n%s", diff)
	}
	handle(events.TypeObjectAccepted, quotaRecord(t, "team", "q", "4"))
	if got := latest()["low"]; got != "cluster1=1 " {
		t.Errorf("a raised quota admits low: %q", got)
	}
}
