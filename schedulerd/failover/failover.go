// Package failover decides when a placed template leaves a cluster and when
// the copy it left behind may be deleted. It is pure: the caller passes the
// time, the template's binding and current placement, and what healthd and
// executord last reported; Evaluate returns the evictions due now, the
// purges due now and when to look again.
//
// The rules are Karmada's (reference §6; DESIGN.md says what that reference is),
// with the differences issue 5 asks for:
//
//   - Cluster failover: a NoExecute taint the placement does not tolerate
//     evicts at once; a toleration with tolerationSeconds evicts at the
//     taint's timeAdded + tolerationSeconds (the earliest such time decides).
//     Unlike Karmada it is always on: healthd's default taint policy adds
//     the NoExecute taints.
//   - clusterFailureDetection rules (seed 002, "API-Server-Timeout > 3min")
//     evict once the cluster's /readyz has been failing for longer than the
//     rule says.
//   - Application failover: a workload unhealthy in a cluster for
//     decisionConditions.tolerationSeconds is evicted from it. A cluster that
//     is NotReady or Unreachable counts as unhealthy for every workload in it
//     (Karmada calls that "unknown" and waits for ever; Flotilla does not).
//     applicationFailureDetection rules ("PodUnavailable > 30%") replace the
//     interpreter's verdict as the definition of unhealthy.
//   - Graceful eviction: the evicted copy is kept (PurgeMode Gracefully)
//     until every cluster of the new placement runs the new replicas
//     healthily; Never keeps it until a reschedule; Directly purges at
//     once. Unlike Karmada (karmada-io/karmada#7455) the end of the grace
//     period does not delete the copy when no replacement was placed or
//     became healthy: it is held (events.Eviction.Held) until one is, a
//     reschedule forgets the eviction (Forgotten), or the template is
//     deleted. A failover never deletes the last copy.
package failover

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/schedulerd/plugins/tainttoleration"
)

// Defaults (Karmada's).
const (
	// DefaultGracePeriod is how long a gracefully evicted copy is kept when
	// the policy names no gracePeriodSeconds (Karmada's
	// --graceful-eviction-timeout).
	DefaultGracePeriod = 10 * time.Minute
	// DefaultApplicationToleration is decisionConditions.tolerationSeconds
	// when the policy leaves it out.
	DefaultApplicationToleration = 300 * time.Second
)

// Purge reasons.
const (
	PurgedReplacementHealthy = "replacement healthy"
	PurgedDirectly           = "purgeMode Directly"
)

// Why a copy is held past its grace period (events.Eviction.Held).
const (
	HeldNotPlaced  = "no replacement could be placed"
	HeldNotHealthy = "the replacement is not healthy"
)

// Input is what one evaluation depends on.
type Input struct {
	Now     time.Time
	Binding events.Binding
	// Placement is the template's current (last published) placement.
	Placement events.PlacementDecision
	// Health per cluster (nil or missing: no report yet).
	Health map[string]*events.ClusterHealth
	// Taints per cluster: the Cluster object's spec.taints and healthd's.
	Taints map[string][]corev1.Taint
	// Work: the template's last status per cluster.
	Work map[string]events.WorkStatus
	// RuleSince: per cluster, since when the template's
	// applicationFailureDetection rules have held there, as the caller
	// observed it from the work statuses (see RulesHold); a cluster missing
	// here has no rule holding.
	RuleSince map[string]time.Time
}

// Purge releases one kept copy.
type Purge struct {
	Cluster string
	Reason  string
}

// Hold marks a copy kept past its grace period, or says the reason for
// holding it changed.
type Hold struct {
	Cluster string
	// Why: HeldNotPlaced or HeldNotHealthy.
	Why string
}

// Verdict is what is due now, and when to evaluate again.
type Verdict struct {
	// Evict: clusters to leave now, sorted by cluster name.
	Evict []events.Eviction
	// Purge: kept copies to release now, sorted by cluster name.
	Purge []Purge
	// Hold: kept copies whose Held must be set (or changed) now, because
	// their grace period is over without a healthy replacement.
	Hold []Hold
	// NextCheck: when a toleration, grace period or rule runs out next
	// (zero: nothing is pending, only a new report can change the verdict).
	NextCheck time.Time
}

// Evaluate applies the failover rules to one template.
func Evaluate(in Input) Verdict {
	var v Verdict
	later := func(t time.Time) {
		if v.NextCheck.IsZero() || t.Before(v.NextCheck) {
			v.NextCheck = t
		}
	}
	fo := Behavior(in.Binding.Spec)
	evicted := map[string]bool{}
	for _, e := range in.Placement.Evictions {
		evicted[e.Cluster] = true
		f := OldCopy(in, e)
		switch {
		case f.Purge != "":
			v.Purge = append(v.Purge, Purge{e.Cluster, f.Purge})
		case f.Held != e.Held:
			v.Hold = append(v.Hold, Hold{e.Cluster, f.Held})
		}
		if !f.Next.IsZero() {
			later(f.Next)
		}
	}
	clusters := slices.Clone(in.Placement.Clusters)
	sort.Slice(clusters, func(i, j int) bool { return clusters[i].Name < clusters[j].Name })
	for _, tc := range clusters {
		if evicted[tc.Name] {
			continue
		}
		ev, at := evictionDue(in, fo, tc)
		if ev != nil {
			v.Evict = append(v.Evict, *ev)
		} else if !at.IsZero() {
			later(at)
		}
	}
	return v
}

// Behavior is the template's failover block: spec.failover, with the seed's
// spec.placement.failover merged in (policyd already merges it; this keeps
// the core right for bindings written by hand or by older policyd).
func Behavior(spec *policy.PropagationSpec) policy.FailoverBehavior {
	if spec == nil {
		return policy.FailoverBehavior{}
	}
	var fo policy.FailoverBehavior
	if spec.Failover != nil {
		fo = *spec.Failover
	}
	if pf := spec.Placement.Failover; pf != nil {
		if fo.Application == nil {
			fo.Application = pf.Application
		}
		if fo.Cluster == nil {
			fo.Cluster = pf.Cluster
		}
		if len(fo.ApplicationFailureDetection) == 0 {
			fo.ApplicationFailureDetection = pf.ApplicationFailureDetection
		}
		if len(fo.ClusterFailureDetection) == 0 {
			fo.ClusterFailureDetection = pf.ClusterFailureDetection
		}
	}
	return fo
}

// NormalPurgeMode maps the seed's older spellings and "" to Karmada's modes.
func NormalPurgeMode(m string) string {
	switch m {
	case "", "Graciously", events.PurgeGracefully:
		return events.PurgeGracefully
	case "Immediately", events.PurgeDirectly:
		return events.PurgeDirectly
	}
	return m
}

// Fate is what becomes of one evicted copy now.
type Fate struct {
	// Purge: release the copy now, for this reason ("": keep it).
	Purge string
	// Held: why a kept copy is kept past its grace period (HeldNotPlaced,
	// HeldNotHealthy; "" within it, for Never, and once released).
	Held string
	// Next: when the fate changes unless a report changes it first (zero:
	// only a new report can).
	Next time.Time
}

// OldCopy decides the fate of the copy eviction e left behind, in the
// template's current placement and work health (in):
//   - released already (PurgedAt set): nothing more;
//   - purgeMode Directly: purge now;
//   - purgeMode Never: kept, until a reschedule forgets it (Forgotten);
//   - Gracefully: purged once every cluster of the placement runs the new
//     replicas healthily; until then kept, and once the grace period is
//     over held, with why: no replacement could be placed, or it is not
//     healthy. Karmada purges at the end of the grace period whatever the
//     replacement's state (karmada-io/karmada#7455); Flotilla never deletes
//     the last copy.
//
// The template's deletion withdraws its whole placement, kept copies
// included; the shell never asks about a deleted template.
func OldCopy(in Input, e events.Eviction) Fate {
	switch {
	case e.PurgedAt != nil:
		return Fate{}
	case e.PurgeMode == events.PurgeDirectly:
		return Fate{Purge: PurgedDirectly}
	case e.PurgeMode == events.PurgeNever:
		return Fate{}
	}
	if replacementHealthy(in) {
		return Fate{Purge: PurgedReplacementHealthy}
	}
	grace := DefaultGracePeriod
	if e.GracePeriodSeconds > 0 {
		grace = time.Duration(e.GracePeriodSeconds) * time.Second
	}
	if deadline := e.EvictedAt.Add(grace); in.Now.Before(deadline) {
		return Fate{Next: deadline}
	}
	if !in.Placement.Scheduled || len(in.Placement.Clusters) == 0 {
		return Fate{Held: HeldNotPlaced}
	}
	return Fate{Held: HeldNotHealthy}
}

// Forgotten reports whether a fresh reschedule (flotilla reschedule) drops
// eviction e, so that its cluster is a candidate again and what becomes of
// its copy follows the new placement: the user's decision wins. It drops
// released evictions, those of purgeMode Never (standing in for Karmada's
// suppressDeletion: false) and held ones; a Gracefully evicted copy still
// within its grace period stays kept, as before the reschedule.
func Forgotten(e events.Eviction) bool {
	return !e.Kept() || e.PurgeMode == events.PurgeNever || e.Held != ""
}

// replacementHealthy: the placement is scheduled and every cluster in it
// reports the template Healthy at the current generation and replica count.
func replacementHealthy(in Input) bool {
	p := in.Placement
	if !p.Scheduled || len(p.Clusters) == 0 {
		return false
	}
	for _, tc := range p.Clusters {
		st, ok := in.Work[tc.Name]
		if !ok || st.Health != events.WorkHealthy || st.Generation < in.Binding.Generation {
			return false
		}
		if in.Binding.Replicas > 0 && st.Replicas != tc.Replicas {
			return false
		}
	}
	return true
}

// evictionDue decides whether the template leaves cluster tc now; if not,
// when a running toleration or rule ends (zero: none is running).
func evictionDue(in Input, fo policy.FailoverBehavior, tc events.TargetCluster) (*events.Eviction, time.Time) {
	var next time.Time
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	clusterMode := events.PurgeGracefully
	if fo.Cluster != nil {
		clusterMode = NormalPurgeMode(fo.Cluster.PurgeMode)
	}
	evict := func(reason, mode string, grace int32, msg string) *events.Eviction {
		e := &events.Eviction{Cluster: tc.Name, Reason: reason, Message: msg, PurgeMode: mode,
			GracePeriodSeconds: grace, Replicas: tc.Replicas, EvictedAt: in.Now}
		if preserves(fo, reason) {
			// statePreservation (Karmada's StatefulFailoverInjection): the
			// evicted copy's values travel to the new copies as labels.
			if st, ok := in.Work[tc.Name]; ok && len(st.PreservedState) > 0 {
				e.PreservedLabels = maps.Clone(st.PreservedState)
			}
			for _, c := range in.Placement.Clusters {
				e.ClustersBeforeFailover = append(e.ClustersBeforeFailover, c.Name)
			}
			sort.Strings(e.ClustersBeforeFailover)
		}
		if mode == events.PurgeDirectly {
			at := in.Now
			e.PurgedAt, e.PurgeReason = &at, PurgedDirectly
		}
		return e
	}

	// 1. NoExecute taints (reference §6.2).
	var tols []corev1.Toleration
	if in.Binding.Spec != nil {
		tols = in.Binding.Spec.Placement.ClusterTolerations
	}
	trigger, culprit := time.Time{}, ""
	for i := range in.Taints[tc.Name] {
		t := &in.Taints[tc.Name][i]
		if t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		used := -1
		for j := range tols {
			if tainttoleration.Tolerated(tols[j:j+1], t) {
				used = j
				break
			}
		}
		if used < 0 {
			return evict(events.EvictTaintUntolerated, clusterMode, 0,
				fmt.Sprintf("%s has taint %s:%s, which the placement does not tolerate", tc.Name, t.Key, t.Effect)), time.Time{}
		}
		if s := tols[used].TolerationSeconds; s != nil && t.TimeAdded != nil {
			at := t.TimeAdded.Add(time.Duration(*s) * time.Second)
			if trigger.IsZero() || at.Before(trigger) {
				trigger, culprit = at, fmt.Sprintf("%s has had taint %s:%s since %s, longer than its toleration of %ds",
					tc.Name, t.Key, t.Effect, t.TimeAdded.UTC().Format(time.RFC3339), *s)
			}
		}
	}
	if !trigger.IsZero() {
		if !in.Now.Before(trigger) {
			return evict(events.EvictTaintUntolerated, clusterMode, 0, culprit), time.Time{}
		}
		later(trigger)
	}

	// 2. clusterFailureDetection rules (seed 002).
	h := in.Health[tc.Name]
	for _, r := range fo.ClusterFailureDetection {
		rule, bad := policy.ParseDetectionRule(r.Rule, false)
		if bad != "" || h == nil || h.FailingSince == nil {
			continue
		}
		failing := in.Now.Sub(*h.FailingSince)
		if rule.Holds(0, failing) {
			return evict(events.EvictClusterFailure, clusterMode, 0,
				fmt.Sprintf("%q holds: %s's /readyz has been failing for %s", r.Rule, tc.Name, failing.Round(time.Second))), time.Time{}
		}
		at := h.FailingSince.Add(rule.Duration)
		if !rule.Inclusive {
			at = at.Add(time.Nanosecond)
		}
		later(at)
	}

	// 3. Application failover.
	app := fo.Application
	if app == nil && len(fo.ApplicationFailureDetection) == 0 {
		return nil, next
	}
	tol := DefaultApplicationToleration
	mode, grace := events.PurgeGracefully, int32(0)
	if app != nil {
		if s := app.DecisionConditions.TolerationSeconds; s != nil {
			tol = time.Duration(*s) * time.Second
		}
		mode = NormalPurgeMode(app.PurgeMode)
		if app.GracePeriodSeconds != nil {
			grace = *app.GracePeriodSeconds
		}
	}
	since, why := unhealthySince(in, fo, tc.Name, h)
	if since.IsZero() {
		return nil, next
	}
	deadline := since.Add(tol)
	if !in.Now.Before(deadline) {
		return evict(events.EvictApplicationFailure, mode, grace,
			fmt.Sprintf("%s for %s (tolerationSeconds %d)", why, in.Now.Sub(since).Round(time.Second), int64(tol/time.Second))), time.Time{}
	}
	later(deadline)
	return nil, next
}

// preserves: the failover behaviour that evicts for reason has
// statePreservation rules.
func preserves(fo policy.FailoverBehavior, reason string) bool {
	if reason == events.EvictApplicationFailure {
		return fo.Application != nil && fo.Application.StatePreservation != nil && len(fo.Application.StatePreservation.Rules) > 0
	}
	return fo.Cluster != nil && fo.Cluster.StatePreservation != nil && len(fo.Cluster.StatePreservation.Rules) > 0
}

// unhealthySince: since when the template has been unhealthy in the cluster
// (zero: it is not), and why, in words.
func unhealthySince(in Input, fo policy.FailoverBehavior, cluster string, h *events.ClusterHealth) (time.Time, string) {
	if h != nil && events.ClusterLost(h.State) {
		// Unavailable since its first failed probe: that survives a swap
		// between NotReady and Unreachable, which restarts Since.
		since := h.Since
		if h.FailingSince != nil && h.FailingSince.Before(since) {
			since = *h.FailingSince
		}
		return since, fmt.Sprintf("%s has been %s (probes failing since %s)", cluster, h.State, since.UTC().Format(time.RFC3339))
	}
	st, ok := in.Work[cluster]
	if !ok {
		return time.Time{}, ""
	}
	if len(fo.ApplicationFailureDetection) == 0 {
		if st.Health != events.WorkUnhealthy || st.UnhealthySince == nil {
			return time.Time{}, ""
		}
		return *st.UnhealthySince, fmt.Sprintf("the workload has been unhealthy in %s (%d/%d replicas available)", cluster, st.AvailableReplicas, st.Replicas)
	}
	since, ok := in.RuleSince[cluster]
	if !ok {
		return time.Time{}, ""
	}
	held, holds := RulesHold(fo, st)
	if !holds {
		return time.Time{}, ""
	}
	return since, fmt.Sprintf("%s held in %s (%d of %d replicas unavailable)", held, cluster, st.UnavailableReplicas, st.Replicas)
}

// RulesHold reports whether any applicationFailureDetection rule holds for
// a work status, and which ("" and false without rules). Rules replace the
// interpreter's verdict: a PodUnavailable rule reads unavailableReplicas /
// replicas, whatever Health says.
func RulesHold(fo policy.FailoverBehavior, st events.WorkStatus) (string, bool) {
	if len(fo.ApplicationFailureDetection) == 0 || st.Replicas <= 0 {
		return "", false
	}
	percent := 100 * float64(st.UnavailableReplicas) / float64(st.Replicas)
	var held []string
	for _, r := range fo.ApplicationFailureDetection {
		rule, bad := policy.ParseDetectionRule(r.Rule, true)
		if bad == "" && rule.Holds(percent, 0) {
			held = append(held, fmt.Sprintf("%q", r.Rule))
		}
	}
	return strings.Join(held, ", "), len(held) > 0
}
