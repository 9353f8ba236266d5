package healthd

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

var (
	t0       = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	good     = ProbeResult{OK: true, Reachable: true, Latency: 3 * time.Millisecond}
	slow     = ProbeResult{OK: true, Reachable: true, Latency: 1900 * time.Millisecond}
	refused  = ProbeResult{Message: "/readyz: connection refused"}
	answered = ProbeResult{Reachable: true, Message: "/readyz: 500 etcd not ready"}
)

// step is one probe (or, with tick, one pass of the taint policy without a
// probe) at t0 + at seconds, and what the published health must say then.
type step struct {
	name    string
	at      int
	probe   ProbeResult
	tick    bool
	changed bool
	want    string
}

func run(t *testing.T, tr Tracker, steps []step) {
	t.Helper()
	runWith(t, tr, summary, steps)
}

// runWith is run with what the published health must say rendered by render.
func runWith(t *testing.T, tr Tracker, render func(events.ClusterHealth) string, steps []step) {
	t.Helper()
	for _, s := range steps {
		now := t0.Add(time.Duration(s.at) * time.Second)
		var changed bool
		if s.tick {
			changed = tr.Evaluate(now)
		} else {
			changed = tr.Observe(s.probe, now)
		}
		if got := render(tr.Health("c1")); got != s.want || changed != s.changed {
			t.Fatalf("%s:\nwant %s (changed %t)\ngot  %s (changed %t)", s.name, s.want, s.changed, got, changed)
		}
	}
}

// summary renders what a consumer acts on, with times as seconds after t0.
func summary(h events.ClusterHealth) string {
	rel := func(t time.Time) string { return fmt.Sprintf("+%ds", int(t.Sub(t0)/time.Second)) }
	var b strings.Builder
	fmt.Fprintf(&b, "%s ready=%t since=%s", h.State, h.Ready, rel(h.Since))
	if h.FailingSince != nil {
		fmt.Fprintf(&b, " failing=%s", rel(*h.FailingSince))
	}
	for _, t := range h.Taints {
		fmt.Fprintf(&b, " %s:%s@%s", strings.TrimPrefix(t.Key, "cluster.karmada.io/"), t.Effect, rel(t.TimeAdded.Time))
	}
	return b.String()
}

func newTracker(noExecuteAfter time.Duration) Tracker {
	return NewTracker(Thresholds{Failure: 3, Success: 2}, TaintPolicy{NoExecuteAfter: noExecuteAfter})
}

func TestOneFailedOrSlowProbeChangesNothingButSuspect(t *testing.T) {
	run(t, newTracker(300*time.Second), []step{
		{"the first good probe makes an unknown cluster Ready at once", 0, good, false, true, "Ready ready=true since=+0s"},
		{"a slow probe that still answers changes nothing", 2, slow, false, false, "Ready ready=true since=+0s"},
		{"one failed probe makes it Suspect, still Ready for scheduling, failing since that probe", 4, refused, false, true, "Suspect ready=true since=+4s failing=+4s"},
		{"a second failure keeps it Suspect and FailingSince at the first", 6, answered, false, false, "Suspect ready=true since=+4s failing=+4s"},
		{"a good probe clears the suspicion and FailingSince", 8, good, false, true, "Ready ready=true since=+8s"},
	})
}

func TestThresholdOfFailuresMakesAClusterNotReadyOrUnreachableWithNoSchedule(t *testing.T) {
	t.Run("no answer", func(t *testing.T) {
		run(t, newTracker(300*time.Second), []step{
			{"the cluster is Ready", 0, good, false, true, "Ready ready=true since=+0s"},
			{"the first failure is Suspect", 2, refused, false, true, "Suspect ready=true since=+2s failing=+2s"},
			{"the second is still Suspect", 4, refused, false, false, "Suspect ready=true since=+2s failing=+2s"},
			{"the third without an answer is Unreachable, tainted NoSchedule now, failing since the first", 6, refused, false, true,
				"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s"},
			{"further failures change nothing", 8, refused, false, false, "Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s"},
		})
	})
	t.Run("an answer that is not ready", func(t *testing.T) {
		run(t, newTracker(300*time.Second), []step{
			{"the cluster is Ready", 0, good, false, true, "Ready ready=true since=+0s"},
			{"the first failure is Suspect", 2, answered, false, true, "Suspect ready=true since=+2s failing=+2s"},
			{"the second is still Suspect", 4, answered, false, false, "Suspect ready=true since=+2s failing=+2s"},
			{"the third, answered, is NotReady with the not-ready taint", 6, answered, false, true,
				"NotReady ready=false since=+6s failing=+2s not-ready:NoSchedule@+6s"},
		})
	})
	t.Run("a cluster that never answered", func(t *testing.T) {
		run(t, newTracker(300*time.Second), []step{
			{"one failure leaves an unknown cluster Unknown, tainted not-ready as Karmada does without a condition", 0, refused, false, true,
				"Unknown ready=false since=+0s failing=+0s not-ready:NoSchedule@+0s"},
			{"two leave it Unknown", 2, refused, false, false, "Unknown ready=false since=+0s failing=+0s not-ready:NoSchedule@+0s"},
			{"the third makes it Unreachable", 4, refused, false, true, "Unreachable ready=false since=+4s failing=+0s unreachable:NoSchedule@+4s"},
		})
	})
}

func TestNoExecuteArrivesOnlyAfterNoExecuteAfter(t *testing.T) {
	run(t, newTracker(300*time.Second), []step{
		{"the cluster is Ready", 0, good, false, true, "Ready ready=true since=+0s"},
		{"first failure", 2, refused, false, true, "Suspect ready=true since=+2s failing=+2s"},
		{"second failure", 4, refused, false, false, "Suspect ready=true since=+2s failing=+2s"},
		{"third failure: Unreachable at +6s", 6, refused, false, true, "Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s"},
		{"one tick before 300s have passed there is no NoExecute", 305, refused, false, false,
			"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s"},
		{"at 300s a tick without a probe adds NoExecute, stamped now", 306, ProbeResult{}, true, true,
			"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+306s"},
		{"the probe of the same tick changes nothing more", 306, refused, false, false,
			"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+306s"},
		{"later ticks keep every TimeAdded", 400, ProbeResult{}, true, false,
			"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+306s"},
		{"and later probes too", 402, refused, false, false,
			"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+306s"},
	})
	t.Run("a tick past the threshold stamps the tick, not the threshold", func(t *testing.T) {
		run(t, newTracker(10*time.Second), []step{
			{"three failures from Unknown", 0, refused, false, true, "Unknown ready=false since=+0s failing=+0s not-ready:NoSchedule@+0s"},
			{"", 1, refused, false, false, "Unknown ready=false since=+0s failing=+0s not-ready:NoSchedule@+0s"},
			{"Unreachable at +2s", 2, refused, false, true, "Unreachable ready=false since=+2s failing=+0s unreachable:NoSchedule@+2s"},
			{"the first look after +12s adds NoExecute at +15s", 15, ProbeResult{}, true, true,
				"Unreachable ready=false since=+2s failing=+0s unreachable:NoSchedule@+2s unreachable:NoExecute@+15s"},
		})
	})
}

func TestRecoveryNeedsSuccessThresholdGoodProbesAndRemovesBothTaints(t *testing.T) {
	run(t, newTracker(10*time.Second), []step{
		{"Ready", 0, good, false, true, "Ready ready=true since=+0s"},
		{"Suspect", 1, answered, false, true, "Suspect ready=true since=+1s failing=+1s"},
		{"", 2, answered, false, false, "Suspect ready=true since=+1s failing=+1s"},
		{"NotReady", 3, answered, false, true, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"NoExecute after 10s", 13, answered, false, true, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s not-ready:NoExecute@+13s"},
		{"one good probe is not enough, and FailingSince stays until Ready", 14, good, false, false,
			"NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s not-ready:NoExecute@+13s"},
		{"a failure in between restarts the count", 15, answered, false, false,
			"NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s not-ready:NoExecute@+13s"},
		{"good probe one of two", 16, good, false, false,
			"NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s not-ready:NoExecute@+13s"},
		{"the second good probe in a row recovers and removes both effects", 17, good, false, true, "Ready ready=true since=+17s"},
		{"a new failing spell starts from scratch", 18, answered, false, true, "Suspect ready=true since=+18s failing=+18s"},
	})
}

func TestNotReadyAndUnreachableSwapKeys(t *testing.T) {
	run(t, newTracker(10*time.Second), []step{
		{"Ready", 0, good, false, true, "Ready ready=true since=+0s"},
		{"Suspect", 1, answered, false, true, "Suspect ready=true since=+1s failing=+1s"},
		{"", 2, answered, false, false, "Suspect ready=true since=+1s failing=+1s"},
		{"NotReady", 3, answered, false, true, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"one probe without an answer does not swap", 4, refused, false, false, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"an answer in between restarts the count of the other kind", 5, answered, false, false, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"", 6, refused, false, false, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"", 7, refused, false, false, "NotReady ready=false since=+3s failing=+1s not-ready:NoSchedule@+3s"},
		{"three in a row without an answer swap to unreachable and remove not-ready", 8, refused, false, true,
			"Unreachable ready=false since=+8s failing=+1s unreachable:NoSchedule@+8s"},
		{"the swap does not restart the NoExecute clock: 10s after NotReady began", 13, refused, false, true,
			"Unreachable ready=false since=+8s failing=+1s unreachable:NoSchedule@+8s unreachable:NoExecute@+13s"},
		{"", 14, answered, false, false, "Unreachable ready=false since=+8s failing=+1s unreachable:NoSchedule@+8s unreachable:NoExecute@+13s"},
		{"", 15, answered, false, false, "Unreachable ready=false since=+8s failing=+1s unreachable:NoSchedule@+8s unreachable:NoExecute@+13s"},
		{"three answers in a row swap back; both effects move to not-ready, stamped now", 16, answered, false, true,
			"NotReady ready=false since=+16s failing=+1s not-ready:NoSchedule@+16s not-ready:NoExecute@+16s"},
	})
}

func TestNoExecuteAfterZeroNeverAddsNoExecute(t *testing.T) {
	run(t, newTracker(0), []step{
		{"Ready", 0, good, false, true, "Ready ready=true since=+0s"},
		{"Suspect", 1, refused, false, true, "Suspect ready=true since=+1s failing=+1s"},
		{"", 2, refused, false, false, "Suspect ready=true since=+1s failing=+1s"},
		{"Unreachable", 3, refused, false, true, "Unreachable ready=false since=+3s failing=+1s unreachable:NoSchedule@+3s"},
		{"a day later there is still only NoSchedule", 86403, ProbeResult{}, true, false, "Unreachable ready=false since=+3s failing=+1s unreachable:NoSchedule@+3s"},
	})
}

func TestAClusterWithoutCredentialsIsUnknownAndNeverNoExecute(t *testing.T) {
	tr := newTracker(10 * time.Second)
	if !tr.NoCredentials("no credentials", t0) {
		t.Fatal("the first NoCredentials is news")
	}
	if tr.NoCredentials("no credentials", t0.Add(time.Second)) {
		t.Fatal("the same NoCredentials again is not news")
	}
	tr.Evaluate(t0.Add(time.Hour))
	h := tr.Health("c1")
	if want, got := "Unknown ready=false since=+0s not-ready:NoSchedule@+0s", summary(h); got != want {
		t.Fatalf("want %s\ngot  %s", want, got)
	}
	if h.Reason != ReasonNoCredentials || h.Conditions[0].Status != "Unknown" || h.Message != "no credentials" {
		t.Fatalf("want reason NoCredentials, condition Unknown and the message; got %+v", h)
	}
}

func TestPublishedHealthCarriesTheLastProbe(t *testing.T) {
	tr := newTracker(0)
	tr.Observe(good, t0)
	tr.Observe(refused, t0.Add(2*time.Second))
	h := tr.Health("c1")
	if h.LastProbeError != refused.Message || h.Message != refused.Message || !h.ObservedAt.Equal(t0.Add(2*time.Second)) || h.Conditions[0].Status != "True" {
		t.Fatalf("after a failed probe: %+v", h)
	}
	tr.Observe(slow, t0.Add(4*time.Second))
	h = tr.Health("c1")
	if h.LastProbeError != "" || h.Message != "" || h.LastProbeMs != 1900 || h.FailingSince != nil {
		t.Fatalf("after a good probe the error is gone and the latency recorded: %+v", h)
	}
	tr.Observe(answered, t0.Add(6*time.Second))
	tr.Observe(answered, t0.Add(8*time.Second))
	tr.Observe(answered, t0.Add(10*time.Second))
	if c := tr.Health("c1").Conditions[0]; c.Status != "False" || c.Reason != "ClusterNotReady" {
		t.Fatalf("a NotReady cluster's Ready condition is False: %+v", c)
	}
}

func TestAClusterNotProbedYetHasNothingToPublish(t *testing.T) {
	tr := newTracker(10 * time.Second)
	if tr.Evaluate(t0) || tr.Observed() || tr.Health("c1").Taints != nil {
		t.Fatalf("a tick before the first probe must publish nothing: %+v", tr.Health("c1"))
	}
}

func TestARestartedHealthdCarriesOnFromWhatItPublished(t *testing.T) {
	before := newTracker(10 * time.Second)
	for i, r := range []ProbeResult{good, answered, answered, answered} {
		before.Observe(r, t0.Add(time.Duration(i)*time.Second))
	}
	for i := range 3 {
		before.Observe(refused, t0.Add(time.Duration(4+i)*time.Second))
	}
	before.Evaluate(t0.Add(13 * time.Second))
	last := before.Health("c1")
	if want, got := "Unreachable ready=false since=+6s failing=+1s unreachable:NoSchedule@+6s unreachable:NoExecute@+13s", summary(last); got != want {
		t.Fatalf("setup: want %s\ngot  %s", want, got)
	}
	run(t, RestoreTracker(Thresholds{Failure: 3, Success: 2}, TaintPolicy{NoExecuteAfter: 10 * time.Second}, last), []step{
		{"the first tick after the restart keeps NoExecute, though Unreachable began only 4s before (a swap)", 14, ProbeResult{}, true, false,
			"Unreachable ready=false since=+6s failing=+1s unreachable:NoSchedule@+6s unreachable:NoExecute@+13s"},
		{"the first probe after the restart, still failing, publishes nothing", 14, refused, false, false,
			"Unreachable ready=false since=+6s failing=+1s unreachable:NoSchedule@+6s unreachable:NoExecute@+13s"},
		{"one good probe is still not enough", 16, good, false, false,
			"Unreachable ready=false since=+6s failing=+1s unreachable:NoSchedule@+6s unreachable:NoExecute@+13s"},
		{"success-threshold good probes recover", 18, good, false, true, "Ready ready=true since=+18s"},
	})
	ready := newTracker(10 * time.Second)
	ready.Observe(good, t0)
	run(t, RestoreTracker(Thresholds{Failure: 3, Success: 2}, TaintPolicy{NoExecuteAfter: 10 * time.Second}, ready.Health("c1")), []step{
		{"a restored Ready cluster that is still ready publishes nothing", 20, good, false, false, "Ready ready=true since=+0s"},
		{"and one failure is Suspect", 22, refused, false, true, "Suspect ready=true since=+22s failing=+22s"},
	})
}

var (
	anonGood       = ProbeResult{OK: true, Reachable: true, Anonymous: true, Message: "judged by anonymous GET https://c1/readyz", Latency: 3 * time.Millisecond}
	anonRefused    = ProbeResult{Anonymous: true, Message: "anonymous /readyz: connection refused"}
	anonAnswered   = ProbeResult{Reachable: true, Anonymous: true, Message: "anonymous /readyz: 500 Internal Server Error"}
	anonUnverified = ProbeResult{Reachable: true, Anonymous: true, Inconclusive: ReasonCertificateNotVerified, Message: "anonymous /readyz: the certificate of c1 is not verified"}
	anonForbidden  = ProbeResult{Reachable: true, Anonymous: true, Inconclusive: ReasonAnonymousProbeRefused, Message: "anonymous /readyz: 401 Unauthorized"}
)

// withReason is summary with the published reason.
func withReason(h events.ClusterHealth) string { return summary(h) + " (" + h.Reason + ")" }

func TestAnAnonymouslyProbedClusterGoesThroughTheStateMachineAndSaysHowItWasJudged(t *testing.T) {
	runWith(t, newTracker(10*time.Second), withReason, []step{
		{"a good anonymous probe makes it Ready, with reason AnonymousProbe", 0, anonGood, false, true, "Ready ready=true since=+0s (AnonymousProbe)"},
		{"one failure is Suspect, still judged anonymously", 2, anonRefused, false, true, "Suspect ready=true since=+2s failing=+2s (AnonymousProbe)"},
		{"", 4, anonRefused, false, false, "Suspect ready=true since=+2s failing=+2s (AnonymousProbe)"},
		{"failure-threshold failures without an answer are Unreachable", 6, anonRefused, false, true,
			"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s (ClusterUnreachable)"},
		{"NoExecute follows the default policy", 16, ProbeResult{}, true, true,
			"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s (ClusterUnreachable)"},
		{"", 18, anonGood, false, false,
			"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s (ClusterUnreachable)"},
		{"success-threshold good probes recover", 20, anonGood, false, true, "Ready ready=true since=+20s (AnonymousProbe)"},
	})
	tr := newTracker(10 * time.Second)
	tr.Observe(anonGood, t0)
	h := tr.Health("c1")
	if h.Message != anonGood.Message || h.Conditions[0].Reason != ReasonAnonymousProbe || h.Conditions[0].Status != "True" {
		t.Fatalf("a Ready cluster judged anonymously says so in its message and condition: %+v", h)
	}
	runWith(t, newTracker(10*time.Second), withReason, []step{
		{"an answer that is not ready counts as with credentials", 0, anonAnswered, false, true,
			"Unknown ready=false since=+0s failing=+0s not-ready:NoSchedule@+0s (ClusterUnreachable)"},
		{"", 2, anonAnswered, false, false, "Unknown ready=false since=+0s failing=+0s not-ready:NoSchedule@+0s (ClusterUnreachable)"},
		{"", 4, anonAnswered, false, true, "NotReady ready=false since=+4s failing=+0s not-ready:NoSchedule@+0s (ClusterNotReady)"},
	})
}

func TestAnInconclusiveProbeNeitherMakesAClusterReadyNorLost(t *testing.T) {
	t.Run("a cluster healthd knows nothing about", func(t *testing.T) {
		runWith(t, newTracker(10*time.Second), withReason, []step{
			{"an unverified certificate makes it Unknown at once, with the reason and no failing spell", 0, anonUnverified, false, true,
				"Unknown ready=false since=+0s not-ready:NoSchedule@+0s (CertificateNotVerified)"},
			{"more of them change nothing", 2, anonUnverified, false, false, "Unknown ready=false since=+0s not-ready:NoSchedule@+0s (CertificateNotVerified)"},
			{"and never bring NoExecute", 600, anonUnverified, false, false, "Unknown ready=false since=+0s not-ready:NoSchedule@+0s (CertificateNotVerified)"},
			{"an anonymous probe refused 401 says why instead", 602, anonForbidden, false, true,
				"Unknown ready=false since=+0s not-ready:NoSchedule@+0s (AnonymousProbeRefused)"},
			{"a verified good probe makes it Ready", 604, anonGood, false, true, "Ready ready=true since=+604s (AnonymousProbe)"},
		})
	})
	t.Run("a Ready cluster", func(t *testing.T) {
		runWith(t, newTracker(10*time.Second), withReason, []step{
			{"Ready", 0, anonGood, false, true, "Ready ready=true since=+0s (AnonymousProbe)"},
			{"one inconclusive probe changes nothing", 2, anonUnverified, false, false, "Ready ready=true since=+0s (AnonymousProbe)"},
			{"two neither", 4, anonUnverified, false, false, "Ready ready=true since=+0s (AnonymousProbe)"},
			{"failure-threshold in a row make it Unknown, not lost: no failingSince", 6, anonUnverified, false, true,
				"Unknown ready=false since=+6s not-ready:NoSchedule@+6s (CertificateNotVerified)"},
			{"an hour later still no NoExecute", 3606, ProbeResult{}, true, false, "Unknown ready=false since=+6s not-ready:NoSchedule@+6s (CertificateNotVerified)"},
		})
		runWith(t, newTracker(10*time.Second), withReason, []step{
			{"Ready", 0, anonGood, false, true, "Ready ready=true since=+0s (AnonymousProbe)"},
			{"", 2, anonUnverified, false, false, "Ready ready=true since=+0s (AnonymousProbe)"},
			{"", 4, anonUnverified, false, false, "Ready ready=true since=+0s (AnonymousProbe)"},
			{"a good probe in between restarts the count", 6, anonGood, false, false, "Ready ready=true since=+0s (AnonymousProbe)"},
			{"", 8, anonUnverified, false, false, "Ready ready=true since=+0s (AnonymousProbe)"},
		})
	})
	t.Run("a lost cluster", func(t *testing.T) {
		runWith(t, newTracker(10*time.Second), withReason, []step{
			{"Ready", 0, anonGood, false, true, "Ready ready=true since=+0s (AnonymousProbe)"},
			{"", 2, anonRefused, false, true, "Suspect ready=true since=+2s failing=+2s (AnonymousProbe)"},
			{"", 4, anonRefused, false, false, "Suspect ready=true since=+2s failing=+2s (AnonymousProbe)"},
			{"Unreachable", 6, anonRefused, false, true, "Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s (ClusterUnreachable)"},
			{"an answer healthd cannot verify keeps it Unreachable, neither recovered nor swapped", 8, anonUnverified, false, false,
				"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s (ClusterUnreachable)"},
			{"", 10, anonUnverified, false, false, "Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s (ClusterUnreachable)"},
			{"", 12, anonForbidden, false, false, "Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s (ClusterUnreachable)"},
			{"and NoExecute still comes", 16, anonUnverified, false, true,
				"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s (ClusterUnreachable)"},
			{"a good probe", 18, anonGood, false, false,
				"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s (ClusterUnreachable)"},
			{"an inconclusive one breaks the run of good probes", 20, anonUnverified, false, false,
				"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s (ClusterUnreachable)"},
			{"", 22, anonGood, false, false,
				"Unreachable ready=false since=+6s failing=+2s unreachable:NoSchedule@+6s unreachable:NoExecute@+16s (ClusterUnreachable)"},
			{"success-threshold good probes in a row recover", 24, anonGood, false, true, "Ready ready=true since=+24s (AnonymousProbe)"},
		})
	})
}

func TestARestartedHealthdKeepsHowItJudgedACluster(t *testing.T) {
	th, p := Thresholds{Failure: 3, Success: 2}, TaintPolicy{NoExecuteAfter: 10 * time.Second}
	ready := newTracker(10 * time.Second)
	ready.Observe(anonGood, t0)
	runWith(t, RestoreTracker(th, p, ready.Health("c1")), withReason, []step{
		{"a Ready cluster judged anonymously that still is publishes nothing", 20, anonGood, false, false, "Ready ready=true since=+0s (AnonymousProbe)"},
	})
	unverified := newTracker(10 * time.Second)
	unverified.Observe(anonUnverified, t0)
	runWith(t, RestoreTracker(th, p, unverified.Health("c1")), withReason, []step{
		{"a cluster whose certificate is still not verified publishes nothing", 20, anonUnverified, false, false,
			"Unknown ready=false since=+0s not-ready:NoSchedule@+0s (CertificateNotVerified)"},
	})
	runWith(t, RestoreTracker(th, p, ready.Health("c1")), withReason, []step{
		{"a cluster judged anonymously, now probed with credentials, says so", 20, good, false, true, "Ready ready=true since=+0s (ClusterReady)"},
	})
}
