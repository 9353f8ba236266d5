package readmodel

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// Unowned is the INSTANCE of the row listing the work no instance owns.
const Unowned = "<none>"

// InstanceRow is one row of `get instances`: a running instance and the
// work items it owns (its leases), or, with Instance Unowned, the work
// items of a daemon that no instance owns.
type InstanceRow struct {
	Daemon    string    `json:"daemon"`
	Instance  string    `json:"instance"`
	Version   string    `json:"version,omitempty"`
	Node      string    `json:"node,omitempty"`
	Owns      []string  `json:"owns"`
	Heartbeat time.Time `json:"heartbeat,omitzero"`
}

// Instances lists every registered instance with the leases it holds, by
// daemon and name, and for each daemon of shared that has a registered
// instance, the work items of shared[daemon] (its partitions, or the
// member clusters it serves) that no lease holds.
func Instances(regs []events.InstanceRecord, leases []events.LeaseRecord, shared map[string][]string) []InstanceRow {
	held := map[[2]string][]string{}
	leased := map[string]map[string]bool{}
	for _, l := range leases {
		held[[2]string{l.Daemon, l.Instance}] = append(held[[2]string{l.Daemon, l.Instance}], l.Work)
		if leased[l.Daemon] == nil {
			leased[l.Daemon] = map[string]bool{}
		}
		leased[l.Daemon][l.Work] = true
	}
	var out []InstanceRow
	running := map[string]bool{}
	for _, r := range regs {
		owns := held[[2]string{r.Daemon, r.Instance}]
		slices.SortFunc(owns, events.CompareWork)
		out = append(out, InstanceRow{Daemon: r.Daemon, Instance: r.Instance, Version: r.Version, Node: r.Node, Owns: owns, Heartbeat: r.Heartbeat})
		running[r.Daemon] = true
	}
	for d, items := range shared {
		if !running[d] {
			continue
		}
		var free []string
		for _, w := range items {
			if !leased[d][w] {
				free = append(free, w)
			}
		}
		if len(free) > 0 {
			slices.SortFunc(free, events.CompareWork)
			out = append(out, InstanceRow{Daemon: d, Instance: Unowned, Owns: free})
		}
	}
	slices.SortFunc(out, func(a, b InstanceRow) int {
		if c := strings.Compare(a.Daemon, b.Daemon); c != 0 {
			return c
		}
		return strings.Compare(a.Instance, b.Instance)
	})
	return out
}

// WorkRanges writes work items compactly: runs of partitions as p0-p7,
// the rest as they are, comma-separated; "<none>" for none.
func WorkRanges(items []string) string {
	if len(items) == 0 {
		return "<none>"
	}
	var parts []string
	for i := 0; i < len(items); {
		n, ok := events.PartitionNumber(items[i])
		j := i + 1
		for ok && j < len(items) {
			m, mok := events.PartitionNumber(items[j])
			if !mok || m != n+(j-i) {
				break
			}
			j++
		}
		if j-i > 2 {
			parts = append(parts, fmt.Sprintf("%s-%s", items[i], items[j-1]))
		} else {
			parts = append(parts, items[i:j]...)
		}
		i = j
	}
	return strings.Join(parts, ",")
}

// InstanceObject is an instance row as a Kubernetes-style object (-o json|yaml).
func InstanceObject(r InstanceRow) map[string]any {
	meta := map[string]any{"name": r.Daemon + "." + r.Instance}
	if r.Instance == Unowned {
		meta["name"] = r.Daemon + ".unowned"
	}
	status := map[string]any{"daemon": r.Daemon, "instance": r.Instance, "owns": r.Owns}
	if r.Version != "" {
		status["version"] = r.Version
	}
	if r.Node != "" {
		status["natsNode"] = r.Node
	}
	if !r.Heartbeat.IsZero() {
		status["lastHeartbeat"] = r.Heartbeat.UTC().Format(time.RFC3339)
	}
	return map[string]any{"apiVersion": FlotillaAPIVersion, "kind": "Instance", "metadata": meta, "status": status}
}
