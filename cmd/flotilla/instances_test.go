package main

import (
	"testing"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

func TestEveryDaemonRoleMayKeepItsRegistrationAndLeasesAndAViewerMayListThem(t *testing.T) {
	tests := []struct {
		name    string
		role    string
		subject string
		want    bool
	}{
		{"schedulerd renews a lease", "schedulerd", "$KV.flotilla-leases.schedulerd.p3", true},
		{"policyd renews its registration", "policyd", "$KV.flotilla-instances.policyd.vm-1", true},
		{"healthd reads the partition count", "healthd", "$JS.API.DIRECT.GET.KV_flotilla-settings.$KV.flotilla-settings.partitions", true},
		{"executord opens a bucket", "executord", "$JS.API.INFO", true},
		{"a viewer lists the registry", roleViewer, "$JS.API.STREAM.INFO.KV_flotilla-instances", true},
		{"a viewer writes no lease", roleViewer, "$KV.flotilla-leases.schedulerd.p3", false},
		{"a publisher reads no registry", rolePublisher, "$JS.API.STREAM.INFO.KV_flotilla-instances", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := grantOf(t, natsbus.IssueRequest{Role: tt.role})
			if got := allowed(p.Publish, tt.subject); got != tt.want {
				t.Errorf("%s may publish to %s = %v, want %v", tt.role, tt.subject, got, tt.want)
			}
		})
	}
}
