package healthd

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

// Reasons healthd gives a cluster itself (the others are Karmada's
// ClusterReady, ClusterNotReady and ClusterUnreachable).
const (
	// ReasonNoCredentials: healthd cannot probe the cluster. Its
	// registration carries no credentials healthd can open, and no
	// spec.apiEndpoint to probe anonymously.
	ReasonNoCredentials = "NoCredentials"
	// ReasonAnonymousProbe: a Ready cluster healthd holds no credentials
	// for, judged by anonymous GET /readyz at its spec.apiEndpoint.
	ReasonAnonymousProbe = "AnonymousProbe"
	// ReasonCertificateNotVerified: the anonymous probe's answer came over
	// TLS with a certificate healthd could not verify, so it says nothing.
	ReasonCertificateNotVerified = "CertificateNotVerified"
	// ReasonAnonymousProbeRefused: the API server answered the anonymous
	// probe 401 or 403 (anonymous auth off, or system:public-info-viewer
	// not bound), so the answer says nothing about its readiness.
	ReasonAnonymousProbeRefused = "AnonymousProbeRefused"
)

// ProbeResult is one /readyz probe.
type ProbeResult struct {
	OK        bool
	Reachable bool // false: no HTTP answer at all (connection refused, timeout)
	// Inconclusive, when set, is the reason the answer says nothing about
	// the cluster (ReasonCertificateNotVerified, ReasonAnonymousProbeRefused):
	// it is neither a good probe nor evidence that the cluster is lost.
	Inconclusive string
	// Anonymous: the probe went without credentials to spec.apiEndpoint.
	Anonymous bool
	// Message: why the probe failed, or, for a good anonymous probe, how
	// the cluster was judged.
	Message string
	Latency time.Duration
}

// Thresholds are the state machine's hysteresis.
type Thresholds struct {
	// Failure: failed probes in a row before a cluster is NotReady or
	// Unreachable, and before a NotReady cluster becomes Unreachable (or
	// back), so a cluster that alternates between the two does not swap
	// its taint on every probe.
	Failure int
	// Success: good probes in a row before a NotReady or Unreachable
	// cluster is Ready again.
	Success int
}

// Tracker is the state machine of one cluster, and the taints it implies.
//
//	Unknown ──good probe──▶ Ready ──failed probe──▶ Suspect ──good probe──▶ Ready
//	Unknown, Suspect ──Failure failed probes in a row──▶ NotReady (the API server answered, not ready)
//	                                                  or Unreachable (no answer)
//	NotReady ◀──Failure failed probes of the other kind in a row──▶ Unreachable
//	NotReady, Unreachable ──Success good probes in a row──▶ Ready
//	Unknown ──inconclusive probe──▶ Unknown (its reason: why healthd cannot judge)
//	Ready, Suspect ──Failure inconclusive probes in a row──▶ Unknown
//
// One slow or failed probe changes nothing but Suspect, which still counts
// as Ready for scheduling. An inconclusive probe (ProbeResult.Inconclusive)
// is no evidence either way: it never makes a cluster Ready, never starts a
// failing spell (failingSince), and keeps a NotReady or Unreachable cluster
// where it is. The taints follow the state through the TaintPolicy.
// Tracker does no I/O and reads no clock: every method takes now. It is not
// safe for concurrent use.
type Tracker struct {
	thresholds Thresholds
	policy     TaintPolicy

	state, reason, message string
	since                  time.Time // when state began
	failingSince           time.Time // first failed probe of the current failing spell; zero while Ready
	badSince               time.Time // when the cluster became NotReady or Unreachable, kept across swaps
	observedAt             time.Time // last probe
	lastError              string
	latency                time.Duration
	failures, successes    int // in a row
	otherKind              int // failures in a row of the bad kind the cluster is not in
	inconclusive           int // inconclusive probes in a row
	taints                 []corev1.Taint
	holding                []time.Time // per taint rule: since when its addOnConditions have held
}

// NewTracker returns the tracker of a cluster not probed yet (Unknown).
// Thresholds below 1 count as 1.
func NewTracker(th Thresholds, p TaintPolicy) Tracker {
	th.Failure, th.Success = max(th.Failure, 1), max(th.Success, 1)
	return Tracker{thresholds: th, policy: p, state: events.ClusterStateUnknown}
}

// RestoreTracker resumes from h, the last health healthd published for the
// cluster before it restarted, so a restart neither repeats the detection
// nor restamps the taints: state, since, failingSince and every taint's
// TimeAdded carry on. The NotReady/Unreachable clock (for NoExecute) resumes
// from since, or earlier if a NoExecute taint shows the cluster was bad
// before a swap. The next probe continues the state machine from there (a
// lost cluster stays lost until success-threshold good probes).
func RestoreTracker(th Thresholds, p TaintPolicy, h events.ClusterHealth) Tracker {
	t := NewTracker(th, p)
	switch h.State {
	case events.ClusterStateReady, events.ClusterStateSuspect, events.ClusterStateNotReady, events.ClusterStateUnreachable, events.ClusterStateUnknown:
	default:
		return t
	}
	t.state, t.message, t.lastError = h.State, h.Message, h.LastProbeError
	t.since, t.observedAt = h.Since, h.ObservedAt
	t.latency = time.Duration(h.LastProbeMs) * time.Millisecond
	switch h.Reason {
	case ReasonNoCredentials, ReasonAnonymousProbe, ReasonCertificateNotVerified, ReasonAnonymousProbeRefused:
		t.reason = h.Reason // healthd's own; the others are derived from the state
	}
	if h.FailingSince != nil {
		t.failingSince = *h.FailingSince
	}
	for _, tt := range h.Taints {
		t.taints = append(t.taints, *tt.DeepCopy())
	}
	switch {
	case events.ClusterLost(t.state):
		t.failures, t.badSince = t.thresholds.Failure, t.since
		for _, tt := range t.taints {
			if tt.Effect == corev1.TaintEffectNoExecute && tt.TimeAdded != nil && p.NoExecuteAfter > 0 {
				if b := tt.TimeAdded.Add(-p.NoExecuteAfter); b.Before(t.badSince) {
					t.badSince = b
				}
			}
		}
	case t.state == events.ClusterStateSuspect:
		t.failures = 1
	case t.state == events.ClusterStateUnknown && (t.reason == ReasonCertificateNotVerified || t.reason == ReasonAnonymousProbeRefused):
		t.inconclusive = t.thresholds.Failure
	}
	if t.observedAt.IsZero() {
		t.observedAt = t.since
	}
	return t
}

// UsePolicy replaces the taint policy (the cluster's labels changed, so
// other rules may target it). Taints already set stay until the new policy
// removes them, as when a Karmada ClusterTaintPolicy is deleted.
func (t *Tracker) UsePolicy(p TaintPolicy) {
	t.policy, t.holding = p, nil
}

// Ready reports whether the state counts as Ready for scheduling (a Suspect
// cluster is still Ready: one slow probe changes nothing).
func (t *Tracker) Ready() bool {
	return t.state == events.ClusterStateReady || t.state == events.ClusterStateSuspect
}

// Observed reports whether the cluster was ever probed (or found
// unprobeable): whether its health means anything yet.
func (t *Tracker) Observed() bool { return !t.observedAt.IsZero() }

// Observe feeds one probe result; now is when the probe was sent. It
// returns true when the state, its reason or the taints changed (or, for a
// cluster healthd cannot judge, the message saying why): a transition to
// publish.
func (t *Tracker) Observe(r ProbeResult, now time.Time) bool {
	prev, prevReason, prevMessage := t.state, t.reason, t.message
	t.observedAt, t.latency = now, r.Latency
	switch {
	case r.OK:
		t.inconclusive = 0
		t.succeeded()
	case r.Inconclusive != "" && !events.ClusterLost(t.state):
		t.undecided(r)
	default:
		t.inconclusive = 0
		t.failed(r, now)
	}
	if t.state != prev || t.since.IsZero() {
		t.enter(prev, now)
	}
	t.reason = ""
	switch {
	case t.state == events.ClusterStateUnknown && r.Inconclusive != "":
		t.reason = r.Inconclusive
	case t.Ready() && r.Anonymous:
		t.reason = ReasonAnonymousProbe
	}
	if t.state == events.ClusterStateReady && r.OK {
		t.message = r.Message
	}
	tainted := t.Evaluate(now)
	unjudged := t.state == events.ClusterStateUnknown && t.reason != "" && t.message != prevMessage
	return t.state != prev || t.reason != prevReason || tainted || unjudged
}

// undecided takes an inconclusive probe of a cluster that is not NotReady
// or Unreachable. A cluster healthd knows nothing about is Unknown with the
// reason at once. A Ready or Suspect one stays so until Failure inconclusive
// probes in a row, as one failed probe does not make it NotReady; then it is
// Unknown, as if healthd held no credentials for it: not Ready, and with no
// failing spell, since nothing says the cluster is lost.
func (t *Tracker) undecided(r ProbeResult) {
	t.successes = 0
	t.inconclusive++
	if t.state != events.ClusterStateUnknown && t.inconclusive < t.thresholds.Failure {
		return
	}
	t.state, t.message, t.lastError = events.ClusterStateUnknown, r.Message, r.Message
	t.failures, t.otherKind = 0, 0
	t.failingSince, t.badSince = time.Time{}, time.Time{}
}

func (t *Tracker) succeeded() {
	t.failures, t.otherKind, t.lastError = 0, 0, ""
	t.successes++
	if !events.ClusterLost(t.state) || t.successes >= t.thresholds.Success {
		t.state = events.ClusterStateReady
	}
}

func (t *Tracker) failed(r ProbeResult, now time.Time) {
	t.successes = 0
	t.failures++
	t.lastError, t.message = r.Message, r.Message
	if t.failingSince.IsZero() {
		t.failingSince = now
	}
	kind := events.ClusterStateNotReady
	switch {
	case r.Inconclusive != "":
		kind = t.state // an answer healthd cannot trust is no sign of recovery, nor of the other kind
	case !r.Reachable:
		kind = events.ClusterStateUnreachable
	}
	switch {
	case events.ClusterLost(t.state):
		if kind == t.state {
			t.otherKind = 0
			return
		}
		if t.otherKind++; t.otherKind >= t.thresholds.Failure {
			t.state, t.otherKind = kind, 0
		}
	case t.failures >= t.thresholds.Failure:
		t.state = kind
	case t.state == events.ClusterStateReady:
		t.state = events.ClusterStateSuspect
	}
}

func (t *Tracker) enter(prev string, now time.Time) {
	t.since = now
	switch {
	case t.state == events.ClusterStateReady:
		t.failingSince, t.badSince, t.message = time.Time{}, time.Time{}, ""
	case events.ClusterLost(t.state) && !events.ClusterLost(prev):
		t.badSince = now
	}
}

// NoCredentials records that the cluster cannot be probed: it is Unknown
// with reason NoCredentials and message why. It returns true when that is
// news (a transition to publish).
func (t *Tracker) NoCredentials(message string, now time.Time) bool {
	prev, prevReason, prevMessage := t.state, t.reason, t.message
	t.state, t.reason, t.message = events.ClusterStateUnknown, ReasonNoCredentials, message
	t.failures, t.successes, t.otherKind, t.inconclusive = 0, 0, 0, 0
	t.failingSince, t.badSince, t.lastError, t.latency = time.Time{}, time.Time{}, "", 0
	t.observedAt = now
	if t.state != prev || t.since.IsZero() {
		t.since = now
	}
	tainted := t.Evaluate(now)
	return t.state != prev || t.reason != prevReason || t.message != prevMessage || tainted
}

// Evaluate applies the taint policy at now, without a probe: time passing
// alone can add a NoExecute taint. It returns true when the taints changed.
// Before the first probe it does nothing: healthd has nothing to say yet,
// and a restarted healthd must not announce every member Unknown.
func (t *Tracker) Evaluate(now time.Time) bool {
	if !t.Observed() {
		return false
	}
	next := t.policy.Apply(TaintState{State: t.state, BadSince: t.badSince, Taints: t.taints, Holding: t.holding}, now)
	t.holding = next.Holding
	if sameTaints(next.Taints, t.taints) {
		return false
	}
	t.taints = next.Taints
	return true
}

// Health is the cluster's health as healthd publishes it.
func (t *Tracker) Health(cluster string) events.ClusterHealth {
	h := events.ClusterHealth{Cluster: cluster, Ready: t.Ready(), State: t.state, Reason: t.reason, Message: t.message,
		LastProbeMs: t.latency.Milliseconds(), LastProbeError: t.lastError, Since: utc(t.since), ObservedAt: utc(t.observedAt)}
	if h.State == "" {
		h.State = events.ClusterStateUnknown
	}
	if !t.failingSince.IsZero() {
		fs := t.failingSince.UTC()
		h.FailingSince = &fs
	}
	for _, tt := range t.taints {
		h.Taints = append(h.Taints, *tt.DeepCopy())
	}
	// Karmada's Ready condition: True, False (answers, not ready) or
	// Unknown (no answer, or not probed).
	status, reason := "False", "ClusterNotReady"
	switch {
	case h.Ready:
		status, reason = "True", "ClusterReady"
	case h.State == events.ClusterStateUnreachable || h.State == events.ClusterStateUnknown:
		status, reason = "Unknown", "ClusterUnreachable"
	}
	if h.Reason == "" {
		h.Reason = reason
	}
	h.Conditions = []events.ClusterCondition{{Type: policy.ClusterConditionReady, Status: status, Reason: h.Reason, Message: h.Message, LastTransitionTime: h.Since}}
	return h
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}
