package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

func TestAQuotasOverallUsedIsWhatItsNamespacesPlacementsCount(t *testing.T) {
	r := &recorder{t: t}
	q := policy.FederatedResourceQuota{Spec: policy.FederatedResourceQuotaSpec{Overall: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("4Gi")}}}
	raw, _ := events.MarshalJSON(q)
	qkey := events.KeyOf(policy.PolicyAPIVersion, policy.KindFederatedResourceQuota, "default", "team")
	pub := FoldPublished([]Stored{r.stored(events.TypeObjectAccepted, events.ObjectRecord{Key: qkey, Role: events.RoleQuota, Object: raw, Generation: 1})})
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), "nvidia.com/gpu": resource.MustParse("1")}
	placed := func(k events.ObjectKey, cs ...events.TargetCluster) Stored {
		return r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: k, Scheduled: true, Clusters: cs,
			Binding: &events.Binding{Key: k, ReplicaRequirements: req}})
	}
	other := myApp
	other.Namespace = "elsewhere"
	ms := []Stored{
		placed(myApp, events.TargetCluster{Name: "c1", Replicas: 2}, events.TargetCluster{Name: "c2", Replicas: 1}),
		placed(other, events.TargetCluster{Name: "c1", Replicas: 4}),
	}
	got := Quotas(pub, ms)
	if len(got) != 1 {
		t.Fatalf("quotas: %+v", got)
	}
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}
	if diff := cmp.Diff(want.Cpu().String(), got[0].OverallUsed.Cpu().String()); diff != "" || len(got[0].OverallUsed) != 1 {
		t.Errorf("overallUsed (-want +got):\n%s (all: %v)", diff, got[0].OverallUsed)
	}
}
