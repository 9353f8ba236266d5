package clusteraffinity

import (
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func field(key string, op corev1.NodeSelectorOperator, values ...string) *policy.ClusterAffinity {
	return &policy.ClusterAffinity{FieldSelector: &policy.FieldSelector{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}}
}

func TestFilter(t *testing.T) {
	east := &framework.ClusterInfo{Name: "east", Labels: map[string]string{"env": "prod"},
		Spec: policy.ClusterSpec{Provider: "aws", Region: "us-east-1", Zones: []string{"us-east-1a", "us-east-1b"}}}
	bare := &framework.ClusterInfo{Name: "bare"}
	tests := []struct {
		name string
		aff  *policy.ClusterAffinity
		c    *framework.ClusterInfo
		want bool
	}{
		{"no affinity lets every cluster in", nil, bare, true},
		{"an empty affinity matches every cluster", &policy.ClusterAffinity{}, bare, true},
		{"exclude wins over a matching name", &policy.ClusterAffinity{ClusterNames: []string{"east"}, ExcludeClusters: []string{"east"}}, east, false},
		{"a cluster not in clusterNames is filtered", &policy.ClusterAffinity{ClusterNames: []string{"west"}}, east, false},
		{"a matching label selector passes", &policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, east, true},
		{"an invalid label selector matches nothing", &policy.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "", Operator: metav1.LabelSelectorOpExists}}}}, east, false},
		{"zone In matches when any cluster zone is listed", field("zone", corev1.NodeSelectorOpIn, "us-east-1b"), east, true},
		{"zone In never matches a cluster without zones", field("zone", corev1.NodeSelectorOpIn, "us-east-1b"), bare, false},
		{"zone NotIn fails when any cluster zone is listed", field("zone", corev1.NodeSelectorOpNotIn, "us-east-1a"), east, false},
		{"zone NotIn matches a cluster without zones", field("zone", corev1.NodeSelectorOpNotIn, "us-east-1a"), bare, true},
		{"provider In matches the spec provider", field("provider", corev1.NodeSelectorOpIn, "aws"), east, true},
		{"region NotIn matches a cluster with no region", field("region", corev1.NodeSelectorOpNotIn, "us-east-1"), bare, true},
		{"an unknown field key can never satisfy In", field("metadata.name", corev1.NodeSelectorOpIn, "east"), east, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &framework.Request{Placement: &policy.Placement{ClusterAffinity: tt.aff}, Workload: true}
			if tt.aff != nil {
				req.Affinities = []framework.Affinity{framework.CompileAffinity(tt.aff)}
			}
			if got := New().Filter(req, tt.c).IsSuccess(); got != tt.want {
				t.Errorf("want pass=%v, got %v", tt.want, got)
			}
		})
	}
	t.Run("overflow affinities admit workloads only", func(t *testing.T) {
		req := &framework.Request{Placement: &policy.Placement{}, Workload: true, Affinities: []framework.Affinity{
			framework.CompileAffinity(&policy.ClusterAffinity{ClusterNames: []string{"west"}}),
			framework.CompileAffinity(&policy.ClusterAffinity{ClusterNames: []string{"east"}}),
		}}
		if !New().Filter(req, east).IsSuccess() || req.Tier(east) != 1 {
			t.Errorf("a workload should pass via the overflow affinity at tier 1")
		}
		req.Workload = false
		if New().Filter(req, east).IsSuccess() {
			t.Errorf("a non-workload should only use the primary affinity")
		}
	})
}
