package mirror

import (
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/readmodel"
)

// Karmada's default interpreter aggregates a batch Job's, a LoadBalancer
// Service's and a Pod's status from what each member reflects (the whole
// status of a Pod, a Job's counts, conditions and times, a Service's
// loadBalancer; executord.Reflect), not from replica counts. The functions
// here are its aggregateJobStatus, aggregateServiceStatus and
// aggregatePodStatus over Flotilla's work statuses.

// statusItem is one cluster's reflected status (Karmada's
// AggregatedStatusItem); status is nil until the member reported one.
type statusItem struct {
	cluster string
	status  map[string]any
}

// statusItems are the live works of t and, as nil-status items, the
// target clusters that have not reported yet: Karmada makes a Work for
// every target at once, so its aggregation counts those too. Sorted by
// cluster name.
func statusItems(t readmodel.Template) []statusItem {
	var items []statusItem
	for _, s := range t.Work {
		if live(s) {
			items = append(items, statusItem{cluster: s.Cluster, status: s.Status})
		}
	}
	for _, c := range t.Placement.Clusters {
		if !slices.ContainsFunc(t.Work, func(s events.WorkStatus) bool { return s.Cluster == c.Name && live(s) }) {
			items = append(items, statusItem{cluster: c.Name})
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].cluster < items[j].cluster })
	return items
}

// jobStatus is Karmada's aggregateJobStatus (helper.ParsingJobStatus):
// active, succeeded and failed summed; startTime the earliest;
// completionTime the latest once every member has one; Complete once every
// member's Job completed; Failed naming the members whose Job failed. ok is
// false once the hub's Job (current, its status) is finished: Karmada never
// updates a finished Job again.
//
// The hub's API server checks a Job's status as it checks the Job
// controller's, so the conditions come the way that controller writes
// them: SuccessCriteriaMet before Complete, FailureTarget before Failed,
// and Failed only once no member has active pods (the API refuses a
// finished Job with active pods); a startTime the hub already holds is
// kept (it refuses to change one). A condition's times are the members'
// (the latest completionTime, the latest Failed transition), so a round
// that learns nothing new writes the same status.
func jobStatus(current map[string]any, items []statusItem) (map[string]any, bool) {
	if jobFinished(current) != "" {
		return nil, false
	}
	var active, succeeded, failed int64
	var start, completion time.Time
	var failedIn []string
	var failedAt time.Time
	complete, completed := 0, 0
	for _, it := range items {
		if it.status == nil {
			continue
		}
		active += number(it.status, "active")
		succeeded += number(it.status, "succeeded")
		failed += number(it.status, "failed")
		switch jobFinished(it.status) {
		case "Complete":
			complete++
		case "Failed":
			failedIn = append(failedIn, it.cluster)
			failedAt = latest(failedAt, timestamp(jobCondition(it.status, "Failed"), "lastTransitionTime"))
		}
		if t := timestamp(it.status, "startTime"); !t.IsZero() && (start.IsZero() || t.Before(start)) {
			start = t
		}
		if t := timestamp(it.status, "completionTime"); !t.IsZero() {
			completed++
			completion = latest(completion, t)
		}
	}
	st := map[string]any{}
	for k, v := range map[string]int64{"active": active, "succeeded": succeeded, "failed": failed} {
		if v != 0 {
			st[k] = v
		}
	}
	if held, ok := current["startTime"].(string); ok && held != "" {
		st["startTime"] = held
	} else if !start.IsZero() {
		st["startTime"] = start.Format(time.RFC3339)
	}
	var conds []any
	if len(failedIn) > 0 {
		msg := "Job executed failed in member clusters " + strings.Join(failedIn, ",")
		conds = append(conds, jobConditionAt("FailureTarget", "JobFailed", msg, failedAt))
		if active == 0 {
			conds = append(conds, jobConditionAt("Failed", "JobFailed", msg, failedAt))
		}
	}
	if complete == len(items) && complete > 0 {
		conds = append(conds, jobConditionAt("SuccessCriteriaMet", "Completed", "Job completed", completion),
			jobConditionAt("Complete", "Completed", "Job completed", completion))
	}
	if len(conds) > 0 {
		st["conditions"] = conds
	}
	if !completion.IsZero() && completed == len(items) {
		st["completionTime"] = completion.Format(time.RFC3339)
	}
	return st, true
}

// jobFinished is "Complete" or "Failed" when status has that condition
// True, else "".
func jobFinished(status map[string]any) string {
	for _, typ := range []string{"Complete", "Failed"} {
		if c := jobCondition(status, typ); c != nil && c["status"] == "True" {
			return typ
		}
	}
	return ""
}

// jobCondition is status's condition of type typ, nil without one.
func jobCondition(status map[string]any, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(status, "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m != nil && m["type"] == typ {
			return m
		}
	}
	return nil
}

// jobConditionAt is a True Job condition that last changed at (left out
// when at is unknown).
func jobConditionAt(typ, reason, message string, at time.Time) map[string]any {
	c := map[string]any{"type": typ, "status": "True", "reason": reason, "message": message}
	if !at.IsZero() {
		c["lastTransitionTime"] = at.Format(time.RFC3339)
		c["lastProbeTime"] = at.Format(time.RFC3339)
	}
	return c
}

// serviceStatus is Karmada's aggregateServiceStatus for a LoadBalancer
// Service: every member's status.loadBalancer.ingress, one after the other
// in cluster order, each without a hostname given its cluster's name as
// hostname (to say which member it came from).
func serviceStatus(items []statusItem) map[string]any {
	ingress := []any{}
	for _, it := range items {
		list, _, _ := unstructured.NestedSlice(it.status, "loadBalancer", "ingress")
		for _, i := range list {
			m, _ := i.(map[string]any)
			if m == nil {
				continue
			}
			m = deepCopy(m)
			if h, _ := m["hostname"].(string); h == "" {
				m["hostname"] = it.cluster
			}
			ingress = append(ingress, m)
		}
	}
	lb := map[string]any{}
	if len(ingress) > 0 {
		lb["ingress"] = ingress
	}
	return map[string]any{"loadBalancer": lb}
}

// podStatus is Karmada's aggregatePodStatus: the phase Failed if any
// member's Pod failed, else Pending if any is pending (a member that has
// not reported counts as pending), else Running if any runs, else
// Succeeded; and every member's container and init container statuses,
// each with its name, readiness and state.
func podStatus(items []statusItem) map[string]any {
	phases := map[string]bool{}
	containers, inits := []any{}, []any{}
	for _, it := range items {
		if it.status == nil {
			phases["Pending"] = true
			continue
		}
		p, _ := it.status["phase"].(string)
		phases[p] = true
		containers = append(containers, containerStates(it.status, "containerStatuses")...)
		inits = append(inits, containerStates(it.status, "initContainerStatuses")...)
	}
	st := map[string]any{"containerStatuses": containers}
	if len(inits) > 0 {
		st["initContainerStatuses"] = inits
	}
	// Unknown is deprecated and never aggregated (karmada-io/karmada#2137).
	for _, p := range []string{"Failed", "Pending", "Running", "Succeeded"} {
		if phases[p] {
			st["phase"] = p
			break
		}
	}
	return st
}

// containerStates are the name, ready and state of the statuses under
// field of a Pod's status.
func containerStates(status map[string]any, field string) []any {
	list, _, _ := unstructured.NestedSlice(status, field)
	var out []any
	for _, c := range list {
		m, _ := c.(map[string]any)
		if m == nil {
			continue
		}
		s := map[string]any{"name": m["name"], "ready": m["ready"] == true}
		if state, ok := m["state"].(map[string]any); ok {
			s["state"] = state
		}
		out = append(out, s)
	}
	return out
}

// number is an integer field of m, 0 when absent (JSON numbers decode as
// float64, unstructured ones as int64).
func number(m map[string]any, field string) int64 {
	switch v := m[field].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case int:
		return int64(v)
	}
	return 0
}

// timestamp is an RFC 3339 field of m, zero when absent or malformed.
func timestamp(m map[string]any, field string) time.Time {
	s, _ := m[field].(string)
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// latest is the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// kindOf is the group/kind of a hub object ("" group for core).
func kindOf(obj map[string]any) string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	group, _, found := strings.Cut(apiVersion, "/")
	if !found {
		group = ""
	}
	return group + "/" + kind
}
