package main

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/readmodel"
)

// row is one object of a view: the object -o json|yaml|name|jsonpath
// prints, and the cells of each table row it has (work has one row per
// member).
type row struct {
	obj   *unstructured.Unstructured
	cells [][]any
}

// view is what one resource type shows: its columns (a trailing "+"
// marks a wide one) and rows, and whether it is namespaced.
type view struct {
	columns    []string
	rows       []row
	namespaced bool
	// empty is what to say when there is nothing to list.
	empty string
}

var (
	clusterColumns   = []string{"NAME", "VERSION", "MODE", "READY", "AGE", "STATE+", "PROVIDER+", "REGION+", "NODES+", "CPU(ALLOC/USED)+", "MEMORY(ALLOC/USED)+"}
	templateColumns  = []string{"NAME", "KIND", "READY", "GENERATION", "POLICY", "AGE", "BINDING REVISION+", "WARNINGS+"}
	policyColumns    = []string{"NAME", "KIND", "GENERATION", "AGE"}
	workColumns      = []string{"NAME", "CLUSTER", "STATUS", "AGE", "KIND", "READY+", "HEALTH+", "GENERATION+", "OVERRIDES+", "MESSAGE+"}
	placementColumns = []string{"NAME", "KIND", "SCHEDULED", "CLUSTERS", "AGE", "STRATEGY+", "GENERATION+", "EVICTED+", "REASON+"}
	deadLetterCols   = []string{"NAME", "CONSUMER", "SUBJECT", "REASON", "AGE", "STREAM+", "SEQUENCE+", "DELIVERIES+"}
	instanceColumns  = []string{"DAEMON", "INSTANCE", "VERSION", "OWNS", "HEARTBEAT", "NATS-NODE"}
)

// sharedWork is the work each daemon's instances share by lease (DESIGN.md
// §7), for `get instances` to show what no instance owns: schedulerd's n
// partitions, healthd's members, and push-mode executord's members in push
// mode (a Pull cluster is served by its own executord, which holds no lease).
func sharedWork(n int, clusters []readmodel.Cluster) map[string][]string {
	out := map[string][]string{"schedulerd": natsbus.PartitionItems(n)}
	for _, c := range clusters {
		out["healthd"] = append(out["healthd"], c.Registration.Name)
		if !c.Registration.Spec.PullMode() {
			out["executord"] = append(out["executord"], c.Registration.Name)
		}
	}
	return out
}

func instanceCells(r readmodel.InstanceRow) []any {
	heartbeat, version, node := "", r.Version, r.Node
	if !r.Heartbeat.IsZero() {
		heartbeat = age(r.Heartbeat) + " ago"
	}
	return []any{r.Daemon, r.Instance, version, readmodel.WorkRanges(r.Owns), heartbeat, node}
}

// clusterReady is the READY column: the Ready condition's status as
// healthd reported it (Unknown for Unknown), Unknown before any report.
func clusterReady(c readmodel.Cluster) string {
	if c.Health == nil {
		return "Unknown"
	}
	for _, cond := range c.Health.Conditions {
		if cond.Type == "Ready" && cond.Status != "" {
			return cond.Status
		}
	}
	switch {
	case c.Health.Ready:
		return "True"
	case c.Health.State == events.ClusterStateUnknown || c.Health.State == events.ClusterStateUnreachable:
		return "Unknown"
	}
	return "False"
}

func clusterCells(c readmodel.Cluster) []any {
	state, version, nodes, cpu, mem := events.ClusterStateUnknown, "", "", "", ""
	if c.Health != nil {
		state = c.Health.State
	}
	if cp := c.Capacity; cp != nil {
		version, nodes = cp.KubernetesVersion, fmt.Sprintf("%d/%d", cp.ReadyNodes, cp.Nodes)
		cpu = fmt.Sprintf("%s/%s", cp.Allocatable.Cpu(), cp.Allocated.Cpu())
		mem = fmt.Sprintf("%s/%s", cp.Allocatable.Memory(), cp.Allocated.Memory())
	}
	mode := c.Registration.Spec.SyncMode
	if mode == "" {
		mode = policy.SyncModePush
	}
	r := c.Registration
	return []any{r.Name, version, mode, clusterReady(c), age(c.JoinedAt), state, r.Spec.Provider, r.Spec.Region, nodes, cpu, mem}
}

// readyOf is a template's READY column: ready/desired over its placed
// clusters (readmodel.Template.Totals), "-" when it is not placed.
func readyOf(t readmodel.Template) string {
	if t.Placement.DecidedAt.IsZero() && len(t.Work) == 0 {
		return "-"
	}
	ready, desired := t.ReadyOfAsked()
	if desired == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", ready, desired)
}

func templateCells(f readmodel.Fleet, r events.ObjectRecord) []any {
	policy := "<none>"
	ref, revision := f.Published.ClaimingPolicy(r.Key)
	if ref != nil {
		policy = strings.ToLower(ref.Kind) + "/" + ref.Name
	}
	warnings, rev := "<none>", "<none>"
	if len(r.Warnings) > 0 {
		warnings = strings.Join(r.Warnings, "; ")
	}
	if revision > 0 {
		rev = strconv.FormatInt(revision, 10)
	}
	return []any{r.Key.Name, r.Key.Kind, readyOf(f.Template(r.Key)), r.Generation, policy, age(f.Published.Created(r.Key, r.UpdatedAt)), rev, warnings}
}

func policyCells(f readmodel.Fleet, r events.ObjectRecord) []any {
	return []any{r.Key.Name, r.Key.Kind, r.Generation, age(f.Published.Created(r.Key, r.UpdatedAt))}
}

func workCells(t readmodel.Template, w readmodel.Work, s events.WorkStatus) []any {
	phase, msg := t.Phase(s)
	ready := "-"
	if want := t.Desired(s); want > 0 || s.Replicas > 0 {
		ready = fmt.Sprintf("%d/%d", s.ReadyReplicas, want)
	}
	health := w.Health(s)
	if health == "" {
		health = "-"
	}
	return []any{s.Key.Name, s.Cluster, phase, age(s.CreatedAt), s.Key.Kind, ready, health, s.Generation, strings.Join(s.AppliedOverrides, ","), msg}
}

func placementCells(p events.PlacementDecision) []any {
	var cs []string
	for _, c := range p.Clusters {
		cs = append(cs, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
	}
	reason := p.Error
	if reason == "" {
		reason = p.Division
	}
	var evicted []string
	for _, e := range p.Evictions {
		state := "kept"
		if !e.Kept() {
			state = "purged"
		}
		evicted = append(evicted, e.Cluster+"("+e.Reason+","+state+")")
	}
	return []any{p.Key.Name, p.Key.Kind, strconv.FormatBool(p.Scheduled), orNone(strings.Join(cs, ",")), age(p.DecidedAt), p.Strategy, p.Generation,
		orNone(strings.Join(evicted, ",")), reason}
}

func deadLetterCells(name string, d readmodel.DeadLetter) []any {
	return []any{name, d.Consumer, d.Subject, d.Reason, age(d.At), d.Stream, d.Sequence, d.Deliveries}
}
