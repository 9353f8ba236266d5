package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadyTaint(t *testing.T) {
	type taint struct {
		Key     string
		Tainted bool
	}
	for _, tc := range []struct {
		name, status string
		want         taint
	}{
		{"a Ready cluster is not tainted", "True", taint{}},
		{"a cluster that answers not ready is tainted not-ready", "False", taint{TaintClusterNotReady, true}},
		{"a cluster whose readiness is unknown is tainted unreachable", "Unknown", taint{TaintClusterUnreachable, true}},
		{"a status Kubernetes does not define counts as unknown", "Maybe", taint{TaintClusterUnreachable, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got taint
			got.Key, got.Tainted = ReadyTaint(tc.status)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ReadyTaint(%q) (-want +got):\n%s", tc.status, diff)
			}
		})
	}
}
