package tainttoleration

import (
	"testing"

	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/framework"
	corev1 "k8s.io/api/core/v1"
)

func TestFilter(t *testing.T) {
	noSchedule := corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}
	noExecute := corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute}
	prefer := corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectPreferNoSchedule}
	tests := []struct {
		name     string
		taint    corev1.Taint
		tols     []corev1.Toleration
		previous bool
		want     string // "" = passes
	}{
		{"an untolerated NoSchedule taint filters the cluster", noSchedule, nil, false, "cluster(s) had untolerated taint {k=v:NoSchedule}"},
		{"an untolerated NoExecute taint filters the cluster", noExecute, nil, false, "cluster(s) had untolerated taint {k=v:NoExecute}"},
		{"PreferNoSchedule is ignored", prefer, nil, false, ""},
		{"a cluster already in the result passes its taints", noSchedule, nil, true, ""},
		{"Exists with the key tolerates any value", noSchedule, []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}, false, ""},
		{"Equal needs the same value", noSchedule, []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "w"}}, false, "cluster(s) had untolerated taint {k=v:NoSchedule}"},
		{"an empty operator means Equal", noSchedule, []corev1.Toleration{{Key: "k", Value: "v"}}, false, ""},
		{"an empty key with Exists tolerates every taint", noSchedule, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, false, ""},
		{"a toleration for another effect does not apply", noSchedule, []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, false, "cluster(s) had untolerated taint {k=v:NoSchedule}"},
		{"a toleration for another key does not apply", noSchedule, []corev1.Toleration{{Key: "other", Operator: corev1.TolerationOpExists}}, false, "cluster(s) had untolerated taint {k=v:NoSchedule}"},
		{"Lt and Gt never tolerate", noSchedule, []corev1.Toleration{{Key: "k", Operator: "Lt", Value: "9"}}, false, "cluster(s) had untolerated taint {k=v:NoSchedule}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &framework.Request{Placement: &policy.Placement{ClusterTolerations: tt.tols}}
			if tt.previous {
				req.Previous = map[string]int32{"c": 1}
			}
			c := &framework.ClusterInfo{Name: "c", Spec: policy.ClusterSpec{Taints: []corev1.Taint{tt.taint}}}
			st := New().Filter(req, c)
			if got := st.Message(); got != tt.want {
				t.Errorf("want %q, got %q", tt.want, got)
			}
		})
	}
}
