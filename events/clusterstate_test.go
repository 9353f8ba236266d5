package events

import "testing"

func TestClusterLost(t *testing.T) {
	for _, tt := range []struct {
		name  string
		state string
		want  bool
	}{
		{"a ready cluster is not lost", ClusterStateReady, false},
		{"a suspect cluster still counts as ready", ClusterStateSuspect, false},
		{"a cluster not judged yet is not lost", ClusterStateUnknown, false},
		{"a not-ready cluster is lost", ClusterStateNotReady, true},
		{"an unreachable cluster is lost", ClusterStateUnreachable, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClusterLost(tt.state); got != tt.want {
				t.Errorf("ClusterLost(%q) = %v, want %v", tt.state, got, tt.want)
			}
		})
	}
}
