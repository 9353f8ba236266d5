package preferredaffinity

import (
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
)

func TestScore(t *testing.T) {
	low := policy.PreferredClusterTerm{Weight: 100, Preference: policy.ClusterSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "cost-tier", Operator: corev1.NodeSelectorOpIn, Values: []string{"low"}}},
	}}
	aws := policy.PreferredClusterTerm{Weight: 10, Preference: policy.ClusterSelectorTerm{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: "provider", Operator: corev1.NodeSelectorOpIn, Values: []string{"aws"}}},
	}}
	bigGPU := policy.PreferredClusterTerm{Weight: 7, Preference: policy.ClusterSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpus", Operator: corev1.NodeSelectorOpGt, Values: []string{"4"}}},
	}}
	empty := policy.PreferredClusterTerm{Weight: 1000}
	cl := func(prov string, kv ...string) *framework.ClusterInfo {
		l := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return &framework.ClusterInfo{Name: "c", Labels: l, Spec: policy.ClusterSpec{Provider: prov}}
	}
	tests := []struct {
		name string
		c    *framework.ClusterInfo
		want int64
	}{
		{"a low-cost aws cluster gets both weights", cl("aws", "cost-tier", "low"), 110},
		{"a high-cost aws cluster gets the provider weight only", cl("aws", "cost-tier", "high"), 10},
		{"Gt compares label values as integers", cl("azure", "gpus", "8"), 7},
		{"an unmatched cluster scores 0 and an empty term matches nothing", cl("azure"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &policy.Placement{ClusterAffinity: &policy.ClusterAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []policy.PreferredClusterTerm{low, aws, bigGPU, empty},
			}}
			req := &framework.Request{Placement: pl}
			p := New()
			p.Prepare(req)
			if got, _ := p.Score(req, tt.c); got != tt.want {
				t.Errorf("want %d, got %d", tt.want, got)
			}
		})
	}
}
