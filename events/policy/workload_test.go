package policy

import "testing"

func TestReplicaField(t *testing.T) {
	for _, tc := range []struct {
		name, apiVersion, kind, want string
	}{
		{"an apps/v1 Deployment divides spec.replicas", "apps/v1", "Deployment", "replicas"},
		{"an apps/v1 StatefulSet divides spec.replicas", "apps/v1", "StatefulSet", "replicas"},
		{"an older apps version divides spec.replicas too", "apps/v1beta2", "ReplicaSet", "replicas"},
		{"a batch/v1 Job divides spec.parallelism", "batch/v1", "Job", "parallelism"},
		{"a DaemonSet is not divided", "apps/v1", "DaemonSet", ""},
		{"a custom resource called Deployment is not divided", "example.com/v1", "Deployment", ""},
		{"a core kind is not divided", "v1", "Service", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReplicaField(tc.apiVersion, tc.kind); got != tc.want {
				t.Errorf("ReplicaField(%q, %q) = %q, want %q", tc.apiVersion, tc.kind, got, tc.want)
			}
		})
	}
}
