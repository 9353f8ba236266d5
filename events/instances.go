package events

import (
	"strconv"
	"strings"
	"time"
)

// InstanceRecord is one running daemon instance as it registers itself in
// the instance registry (a KV bucket, DESIGN.md §7), renewed at every
// heartbeat.
type InstanceRecord struct {
	Daemon    string    `json:"daemon"`
	Instance  string    `json:"instance"`
	Version   string    `json:"version"`
	Node      string    `json:"node"` // the NATS server it is connected to
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`
	// Owns are the work items of its leases (p3, cluster1) at the heartbeat.
	Owns []string `json:"owns"`
}

// LeaseRecord is one held lease: a daemon's work item (a partition p<N>,
// a member cluster) and the instance owning it.
type LeaseRecord struct {
	Daemon   string `json:"daemon"`
	Work     string `json:"work"`
	Instance string `json:"instance"`
}

// CompareWork orders work items with partition numbers as numbers (p2
// before p10), cluster names as text.
func CompareWork(a, b string) int {
	na, ea := PartitionNumber(a)
	nb, eb := PartitionNumber(b)
	if ea && eb {
		return na - nb
	}
	return strings.Compare(a, b)
}

// PartitionNumber reads a partition work item (p<N>) back.
func PartitionNumber(w string) (int, bool) {
	if !strings.HasPrefix(w, "p") {
		return 0, false
	}
	n, err := strconv.Atoi(w[1:])
	return n, err == nil
}
