package readmodel

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

func TestInstancesListEachInstanceWithItsLeasesAndTheUnownedPartitionsAndClusters(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	regs := []events.InstanceRecord{
		{Daemon: "schedulerd", Instance: "b", Version: "v1", Node: "n2", Heartbeat: at},
		{Daemon: "schedulerd", Instance: "a", Version: "v1", Node: "n1", Heartbeat: at},
		{Daemon: "policyd", Instance: "a", Version: "v1", Node: "n1", Heartbeat: at},
		{Daemon: "executord", Instance: "x", Version: "v1", Node: "n1", Heartbeat: at},
	}
	leases := []events.LeaseRecord{
		{Daemon: "schedulerd", Work: "p10", Instance: "a"}, {Daemon: "schedulerd", Work: "p2", Instance: "a"},
		{Daemon: "schedulerd", Work: "p0", Instance: "b"}, {Daemon: "schedulerd", Work: "p1", Instance: "b"},
		{Daemon: "executord", Work: "cluster2", Instance: "x"},
	}
	want := []InstanceRow{
		{Daemon: "executord", Instance: Unowned, Owns: []string{"cluster1", "cluster3"}},
		{Daemon: "executord", Instance: "x", Version: "v1", Node: "n1", Owns: []string{"cluster2"}, Heartbeat: at},
		{Daemon: "policyd", Instance: "a", Version: "v1", Node: "n1", Heartbeat: at},
		{Daemon: "schedulerd", Instance: Unowned, Owns: []string{"p3", "p4", "p5", "p6", "p7", "p8", "p9", "p11"}},
		{Daemon: "schedulerd", Instance: "a", Version: "v1", Node: "n1", Owns: []string{"p2", "p10"}, Heartbeat: at},
		{Daemon: "schedulerd", Instance: "b", Version: "v1", Node: "n2", Owns: []string{"p0", "p1"}, Heartbeat: at},
	}
	var partitions []string
	for p := range 12 {
		partitions = append(partitions, events.PartitionItem(p))
	}
	// healthd shares the clusters too, but no instance of it runs: no row.
	got := Instances(regs, leases, map[string][]string{"schedulerd": partitions, "healthd": {"cluster1"}, "executord": {"cluster1", "cluster2", "cluster3"}})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

func TestWorkRangesWriteRunsOfPartitionsCompactly(t *testing.T) {
	tests := []struct {
		name  string
		items []string
		want  string
	}{
		{"nothing is none", nil, "<none>"},
		{"a run of three or more is a range", []string{"p0", "p1", "p2", "p3", "p5", "p6", "p9"}, "p0-p3,p5,p6,p9"},
		{"clusters are listed as they are", []string{"cluster1", "cluster2"}, "cluster1,cluster2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WorkRanges(tt.items); got != tt.want {
				t.Errorf("want %q, got %q", tt.want, got)
			}
		})
	}
}
