package failover

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
)

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

func secs(n int) time.Duration { return time.Duration(n) * time.Second }
func i32(n int32) *int32       { return &n }
func at(d time.Duration) *time.Time {
	t := t0.Add(d)
	return &t
}

// divided622 is a 6-replica workload on cluster1..3 (2/2/2) with the given failover block.
func divided222(fo *policy.FailoverBehavior, tols ...corev1.Toleration) Input {
	spec := &policy.PropagationSpec{Failover: fo}
	spec.Placement.ClusterTolerations = tols
	return Input{
		Binding: events.Binding{Key: events.ObjectKey{Namespace: "default", Group: "apps", Kind: "Deployment", Name: "web"}, Generation: 1, Replicas: 6, Spec: spec},
		Placement: events.PlacementDecision{Scheduled: true, Generation: 1,
			Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 2}, {Name: "cluster2", Replicas: 2}, {Name: "cluster3", Replicas: 2}}},
		Health: map[string]*events.ClusterHealth{},
		Taints: map[string][]corev1.Taint{},
		Work:   map[string]events.WorkStatus{},
	}
}

func noExecute(key string, added time.Duration) corev1.Taint {
	ta := metav1.NewTime(t0.Add(added))
	return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: &ta}
}

func seed000() *policy.FailoverBehavior {
	return &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{
		DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32(60)}, PurgeMode: "Graciously", GracePeriodSeconds: i32(600)}}
}

func evicted(v Verdict) string {
	var s []string
	for _, e := range v.Evict {
		s = append(s, e.Cluster+":"+e.Reason+":"+e.PurgeMode)
	}
	return strings.Join(s, ",")
}

func TestClusterFailover(t *testing.T) {
	tolerate := func(secs *int64) corev1.Toleration {
		return corev1.Toleration{Key: policy.TaintClusterNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}
	}
	s30 := int64(30)
	tests := []struct {
		name      string
		tols      []corev1.Toleration
		taints    []corev1.Taint
		now       time.Duration
		want      string
		wantCheck time.Duration // 0: none
	}{
		{name: "an untolerated NoExecute taint evicts at once with the default Gracefully mode",
			taints: []corev1.Taint{noExecute(policy.TaintClusterNotReady, 0)}, now: 0,
			want: "cluster1:TaintUntolerated:Gracefully"},
		{name: "a NoSchedule taint never evicts",
			taints: []corev1.Taint{{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}}, now: secs(3600)},
		{name: "a toleration without tolerationSeconds tolerates for ever",
			tols: []corev1.Toleration{tolerate(nil)}, taints: []corev1.Taint{noExecute(policy.TaintClusterNotReady, 0)}, now: secs(86400)},
		{name: "a toleration of 30s keeps the workload until one tick before timeAdded+30s",
			tols: []corev1.Toleration{tolerate(&s30)}, taints: []corev1.Taint{noExecute(policy.TaintClusterNotReady, secs(10))}, now: secs(39),
			wantCheck: secs(40)},
		{name: "a toleration of 30s evicts at exactly timeAdded+30s",
			tols: []corev1.Toleration{tolerate(&s30)}, taints: []corev1.Taint{noExecute(policy.TaintClusterNotReady, secs(10))}, now: secs(40),
			want: "cluster1:TaintUntolerated:Gracefully"},
		{name: "a taint without timeAdded contributes no deadline",
			tols:   []corev1.Toleration{tolerate(&s30)},
			taints: []corev1.Taint{{Key: policy.TaintClusterNotReady, Effect: corev1.TaintEffectNoExecute}}, now: secs(3600)},
		{name: "one tolerated and one untolerated taint evicts at once",
			tols:   []corev1.Toleration{tolerate(nil)},
			taints: []corev1.Taint{noExecute(policy.TaintClusterNotReady, 0), noExecute(policy.TaintClusterUnreachable, 0)}, now: 0,
			want: "cluster1:TaintUntolerated:Gracefully"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := divided222(nil, tt.tols...)
			in.Now = t0.Add(tt.now)
			in.Taints["cluster1"] = tt.taints
			v := Evaluate(in)
			if got := evicted(v); got != tt.want {
				t.Fatalf("evicted %q, want %q", got, tt.want)
			}
			var wantCheck time.Time
			if tt.wantCheck != 0 {
				wantCheck = t0.Add(tt.wantCheck)
			}
			if !v.NextCheck.Equal(wantCheck) {
				t.Fatalf("next check %v, want %v", v.NextCheck, wantCheck)
			}
		})
	}
}

func TestClusterPurgeModeComesFromFailoverCluster(t *testing.T) {
	in := divided222(&policy.FailoverBehavior{Cluster: &policy.ClusterFailoverBehavior{PurgeMode: "Directly"}})
	in.Now = t0
	in.Taints["cluster2"] = []corev1.Taint{noExecute(policy.TaintClusterUnreachable, 0)}
	v := Evaluate(in)
	if len(v.Evict) != 1 || v.Evict[0].Cluster != "cluster2" || v.Evict[0].PurgeMode != events.PurgeDirectly || v.Evict[0].PurgedAt == nil || v.Evict[0].Kept() {
		t.Fatalf("want cluster2 evicted Directly and purged at once, got %+v", v.Evict)
	}
	if v.Evict[0].Replicas != 2 {
		t.Fatalf("the eviction records the 2 replicas cluster2 had, got %d", v.Evict[0].Replicas)
	}
}

func TestClusterFailureDetectionRule(t *testing.T) {
	fo := &policy.FailoverBehavior{ClusterFailureDetection: []policy.DetectionRule{{Rule: "API-Server-Timeout > 3min"}}}
	for _, tt := range []struct {
		name      string
		failing   *time.Time
		now       time.Duration
		want      string
		wantCheck time.Time
	}{
		{name: "a cluster whose probes succeed is never failed by the rule", now: secs(3600)},
		{name: "failing for exactly 3min does not satisfy a strict >", failing: at(0), now: secs(180), wantCheck: t0.Add(secs(180) + time.Nanosecond)},
		{name: "failing for longer than 3min evicts", failing: at(0), now: secs(181), want: "cluster1:ClusterFailureDetection:Gracefully"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := divided222(fo)
			in.Now = t0.Add(tt.now)
			in.Health["cluster1"] = &events.ClusterHealth{Cluster: "cluster1", State: "Suspect", FailingSince: tt.failing}
			v := Evaluate(in)
			if got := evicted(v); got != tt.want {
				t.Fatalf("evicted %q, want %q", got, tt.want)
			}
			if !v.NextCheck.Equal(tt.wantCheck) {
				t.Fatalf("next check %v, want %v", v.NextCheck, tt.wantCheck)
			}
		})
	}
}

func TestApplicationFailover(t *testing.T) {
	unhealthy := func(since time.Duration, avail int32) events.WorkStatus {
		return events.WorkStatus{Cluster: "cluster1", Generation: 1, Replicas: 2, AvailableReplicas: avail, UnavailableReplicas: 2 - avail,
			Health: events.WorkUnhealthy, UnhealthySince: at(since)}
	}
	for _, tt := range []struct {
		name      string
		fo        *policy.FailoverBehavior
		health    *events.ClusterHealth
		work      *events.WorkStatus
		now       time.Duration
		want      string
		wantCheck time.Duration
	}{
		{name: "a workload without application failover stays in an Unreachable cluster",
			health: &events.ClusterHealth{State: "Unreachable", Since: t0}, now: secs(3600)},
		{name: "seed 000: an Unreachable cluster keeps the workload for 59s",
			fo: seed000(), health: &events.ClusterHealth{State: "Unreachable", Since: t0}, now: secs(59), wantCheck: secs(60)},
		{name: "seed 000: an Unreachable cluster loses the workload after 60s, Graciously read as Gracefully",
			fo: seed000(), health: &events.ClusterHealth{State: "Unreachable", Since: t0}, now: secs(60), want: "cluster1:ApplicationFailure:Gracefully"},
		{name: "a NotReady cluster counts as unhealthy too",
			fo: seed000(), health: &events.ClusterHealth{State: "NotReady", Since: t0}, now: secs(61), want: "cluster1:ApplicationFailure:Gracefully"},
		{name: "the toleration counts from the first failed probe, so a NotReady to Unreachable swap does not restart it",
			fo: seed000(), health: &events.ClusterHealth{State: "Unreachable", Since: t0.Add(secs(50)), FailingSince: at(0)}, now: secs(60), want: "cluster1:ApplicationFailure:Gracefully"},
		{name: "a Suspect cluster (one failed probe) is not yet unhealthy",
			fo: seed000(), health: &events.ClusterHealth{State: "Suspect", Since: t0}, now: secs(600)},
		{name: "an unhealthy workload is evicted after tolerationSeconds",
			fo: seed000(), work: ptr(unhealthy(0, 1)), now: secs(60), want: "cluster1:ApplicationFailure:Gracefully"},
		{name: "an unhealthy workload is kept before tolerationSeconds",
			fo: seed000(), work: ptr(unhealthy(0, 1)), now: secs(30), wantCheck: secs(60)},
		{name: "tolerationSeconds 0 evicts at the first check",
			fo:   &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32(0)}, PurgeMode: "Immediately"}},
			work: ptr(unhealthy(0, 1)), now: 0, want: "cluster1:ApplicationFailure:Directly"},
		{name: "without tolerationSeconds the default 300s applies",
			fo:   &policy.FailoverBehavior{Application: &policy.ApplicationFailoverBehavior{}},
			work: ptr(unhealthy(0, 1)), now: secs(299), wantCheck: secs(300)},
		{name: "PodUnavailable > 30% holds at 50% unavailable",
			fo:   &policy.FailoverBehavior{ApplicationFailureDetection: []policy.DetectionRule{{Rule: "PodUnavailable > 30%"}}, Application: &policy.ApplicationFailoverBehavior{DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32(10)}}},
			work: ptr(unhealthy(0, 1)), now: secs(10), want: "cluster1:ApplicationFailure:Gracefully"},
		{name: "PodUnavailable > 60% does not hold at 50% unavailable, even though the interpreter says Unhealthy",
			fo:   &policy.FailoverBehavior{ApplicationFailureDetection: []policy.DetectionRule{{Rule: "PodUnavailable > 60%"}}, Application: &policy.ApplicationFailoverBehavior{DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32(10)}}},
			work: ptr(unhealthy(0, 1)), now: secs(3600)},
		{name: "a detection rule alone uses the default toleration of 300s",
			fo:   &policy.FailoverBehavior{ApplicationFailureDetection: []policy.DetectionRule{{Rule: "PodUnavailable >= 50%"}}},
			work: ptr(unhealthy(0, 1)), now: secs(300), want: "cluster1:ApplicationFailure:Gracefully"},
		{name: "a healthy workload stays",
			fo: seed000(), work: &events.WorkStatus{Cluster: "cluster1", Health: events.WorkHealthy, Replicas: 2, AvailableReplicas: 2}, now: secs(3600)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := divided222(tt.fo)
			in.Now = t0.Add(tt.now)
			if tt.health != nil {
				in.Health["cluster1"] = tt.health
			}
			if tt.work != nil {
				in.Work["cluster1"] = *tt.work
				// The caller records when the rules began to hold (here: from the start).
				if _, holds := RulesHold(Behavior(in.Binding.Spec), *tt.work); holds {
					in.RuleSince = map[string]time.Time{"cluster1": *tt.work.UnhealthySince}
				}
			}
			v := Evaluate(in)
			if got := evicted(v); got != tt.want {
				t.Fatalf("evicted %q, want %q (%+v)", got, tt.want, v.Evict)
			}
			var wantCheck time.Time
			if tt.wantCheck != 0 {
				wantCheck = t0.Add(tt.wantCheck)
			}
			if !v.NextCheck.Equal(wantCheck) {
				t.Fatalf("next check %v, want %v", v.NextCheck, wantCheck)
			}
			if tt.want != "" && v.Evict[0].Message == "" {
				t.Fatal("an eviction says why")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestGracefulEvictionPurge(t *testing.T) {
	healthy := func(c string, n int32) events.WorkStatus {
		return events.WorkStatus{Cluster: c, Generation: 1, Replicas: n, AvailableReplicas: n, Health: events.WorkHealthy}
	}
	base := func(mode string, grace int32) Input {
		in := divided222(seed000())
		in.Placement.Clusters = []events.TargetCluster{{Name: "cluster2", Replicas: 3}, {Name: "cluster3", Replicas: 3}}
		in.Placement.Evictions = []events.Eviction{{Cluster: "cluster1", Reason: events.EvictApplicationFailure, PurgeMode: mode, GracePeriodSeconds: grace, Replicas: 2, EvictedAt: t0}}
		return in
	}
	t.Run("the old copy is kept while the new replicas are not yet healthy", func(t *testing.T) {
		in := base(events.PurgeGracefully, 120)
		in.Now = t0.Add(secs(30))
		in.Work["cluster2"] = healthy("cluster2", 3)
		in.Work["cluster3"] = healthy("cluster3", 2) // still the old count
		v := Evaluate(in)
		if len(v.Purge) != 0 || !v.NextCheck.Equal(t0.Add(secs(120))) {
			t.Fatalf("want kept until the grace period ends at +120s, got %+v", v)
		}
	})
	t.Run("the old copy is purged once every new cluster runs its new replicas healthily", func(t *testing.T) {
		in := base(events.PurgeGracefully, 120)
		in.Now = t0.Add(secs(30))
		in.Work["cluster2"] = healthy("cluster2", 3)
		in.Work["cluster3"] = healthy("cluster3", 3)
		v := Evaluate(in)
		if len(v.Purge) != 1 || v.Purge[0] != (Purge{"cluster1", PurgedReplacementHealthy}) {
			t.Fatalf("want cluster1 purged as the replacement is healthy, got %+v", v.Purge)
		}
	})
	t.Run("the old copy is held, not purged, when the grace period ends before the replacement is healthy", func(t *testing.T) {
		in := base(events.PurgeGracefully, 120)
		in.Now = t0.Add(secs(120))
		v := Evaluate(in)
		if diff := cmp.Diff(Verdict{Hold: []Hold{{"cluster1", HeldNotHealthy}}}, v); diff != "" {
			t.Fatalf("want cluster1 held at the end of the grace period (-want +got):\n%s", diff)
		}
	})
	t.Run("a copy already held for the same reason is not held again", func(t *testing.T) {
		in := base(events.PurgeGracefully, 120)
		in.Placement.Evictions[0].Held = HeldNotHealthy
		in.Now = t0.Add(secs(3600))
		if diff := cmp.Diff(Verdict{}, Evaluate(in)); diff != "" {
			t.Fatalf("want nothing to do (-want +got):\n%s", diff)
		}
	})
	t.Run("without gracePeriodSeconds the default of 10 minutes applies", func(t *testing.T) {
		in := base(events.PurgeGracefully, 0)
		in.Now = t0.Add(secs(599))
		if v := Evaluate(in); len(v.Purge) != 0 || !v.NextCheck.Equal(t0.Add(DefaultGracePeriod)) {
			t.Fatalf("want kept until +10min, got %+v", v)
		}
	})
	t.Run("purgeMode Never keeps the copy for ever", func(t *testing.T) {
		in := base(events.PurgeNever, 0)
		in.Now = t0.Add(365 * 24 * time.Hour)
		in.Work["cluster2"] = healthy("cluster2", 3)
		in.Work["cluster3"] = healthy("cluster3", 3)
		if v := Evaluate(in); len(v.Purge) != 0 || !v.NextCheck.IsZero() {
			t.Fatalf("want Never kept, got %+v", v)
		}
	})
	t.Run("an unscheduled placement never counts as a healthy replacement", func(t *testing.T) {
		in := base(events.PurgeGracefully, 120)
		in.Placement.Scheduled, in.Placement.Clusters = false, nil
		in.Now = t0.Add(secs(60))
		if v := Evaluate(in); len(v.Purge) != 0 {
			t.Fatalf("want kept, got %+v", v.Purge)
		}
	})
	t.Run("an evicted cluster is not evaluated for eviction again", func(t *testing.T) {
		in := base(events.PurgeGracefully, 120)
		in.Placement.Clusters = append(in.Placement.Clusters, events.TargetCluster{Name: "cluster1", Replicas: 1})
		in.Health["cluster1"] = &events.ClusterHealth{State: "Unreachable", Since: t0}
		in.Now = t0.Add(secs(3600))
		if v := Evaluate(in); len(v.Evict) != 0 {
			t.Fatalf("want no second eviction of cluster1, got %+v", v.Evict)
		}
	})
}

func TestEvaluateIsDeterministic(t *testing.T) {
	in := divided222(seed000())
	in.Now = t0.Add(secs(3600))
	for _, c := range []string{"cluster3", "cluster1", "cluster2"} {
		in.Health[c] = &events.ClusterHealth{State: "Unreachable", Since: t0}
	}
	in.Placement.Clusters = []events.TargetCluster{{Name: "cluster3", Replicas: 2}, {Name: "cluster1", Replicas: 2}, {Name: "cluster2", Replicas: 2}}
	want := "cluster1:ApplicationFailure:Gracefully,cluster2:ApplicationFailure:Gracefully,cluster3:ApplicationFailure:Gracefully"
	for i := 0; i < 5; i++ {
		if got := evicted(Evaluate(in)); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestStatePreservationTravelsWithTheEviction(t *testing.T) {
	fo := seed000()
	fo.Application.StatePreservation = &policy.StatePreservation{Rules: []policy.StatePreservationRule{{AliasLabelName: "failover.example.io/revision", JSONPath: "{.updateRevision}"}}}
	in := divided222(fo)
	in.Now = t0.Add(secs(60))
	in.Health["cluster1"] = &events.ClusterHealth{State: "Unreachable", Since: t0}
	in.Work["cluster1"] = events.WorkStatus{Cluster: "cluster1", PreservedState: map[string]string{"failover.example.io/revision": "web-7d9f"}}
	v := Evaluate(in)
	if len(v.Evict) != 1 {
		t.Fatalf("want cluster1 evicted, got %+v", v.Evict)
	}
	e := v.Evict[0]
	if e.PreservedLabels["failover.example.io/revision"] != "web-7d9f" || strings.Join(e.ClustersBeforeFailover, ",") != "cluster1,cluster2,cluster3" {
		t.Fatalf("the eviction must carry the preserved state and the clusters before failover: %+v", e)
	}
	t.Run("without statePreservation rules nothing is carried", func(t *testing.T) {
		in := divided222(seed000())
		in.Now = t0.Add(secs(60))
		in.Health["cluster1"] = &events.ClusterHealth{State: "Unreachable", Since: t0}
		in.Work["cluster1"] = events.WorkStatus{Cluster: "cluster1", PreservedState: map[string]string{"a": "b"}}
		if e := Evaluate(in).Evict[0]; e.PreservedLabels != nil || e.ClustersBeforeFailover != nil {
			t.Fatalf("want nothing carried: %+v", e)
		}
	})
}

func TestAPodUnavailableRuleCountsFromWhenItBeganToHold(t *testing.T) {
	fo := &policy.FailoverBehavior{ApplicationFailureDetection: []policy.DetectionRule{{Rule: "PodUnavailable > 30%"}},
		Application: &policy.ApplicationFailoverBehavior{DecisionConditions: policy.DecisionConditions{TolerationSeconds: i32(60)}}}
	in := divided222(fo)
	// Unhealthy (1 of 10 unavailable) for 290 s, then 4 of 10 for the last 10 s.
	in.Work["cluster1"] = events.WorkStatus{Cluster: "cluster1", Replicas: 10, AvailableReplicas: 6, UnavailableReplicas: 4, Health: events.WorkUnhealthy, UnhealthySince: at(0)}
	in.RuleSince = map[string]time.Time{"cluster1": t0.Add(secs(290))}
	in.Now = t0.Add(secs(300))
	v := Evaluate(in)
	if len(v.Evict) != 0 || !v.NextCheck.Equal(t0.Add(secs(350))) {
		t.Fatalf("the rule has held for 10 s of its 60: want no eviction and a check at +350s, got %+v", v)
	}
	t.Run("a status the rule does not hold for is not unhealthy even if the interpreter says so", func(t *testing.T) {
		in := divided222(fo)
		in.Work["cluster1"] = events.WorkStatus{Cluster: "cluster1", Replicas: 10, AvailableReplicas: 8, UnavailableReplicas: 2, Health: events.WorkUnhealthy, UnhealthySince: at(0)}
		in.Now = t0.Add(secs(3600))
		if v := Evaluate(in); len(v.Evict) != 0 {
			t.Fatalf("20%% unavailable does not satisfy > 30%%: %+v", v.Evict)
		}
	})
	t.Run("a rule that holds while the interpreter says Healthy still counts", func(t *testing.T) {
		if _, holds := RulesHold(*fo, events.WorkStatus{Replicas: 10, UnavailableReplicas: 5, Health: events.WorkHealthy}); !holds {
			t.Fatal("the rules, not the interpreter, decide")
		}
	})
}

func TestTheOldCopyIsKeptUntilAReplacementIsHealthy(t *testing.T) {
	healthy := func(c string, n int32) events.WorkStatus {
		return events.WorkStatus{Cluster: c, Generation: 1, Replicas: n, AvailableReplicas: n, Health: events.WorkHealthy}
	}
	replaced := events.PlacementDecision{Scheduled: true, Generation: 1,
		Clusters: []events.TargetCluster{{Name: "cluster2", Replicas: 3}, {Name: "cluster3", Replicas: 3}}}
	unplaced := events.PlacementDecision{Generation: 1, Error: "0/3 clusters are available"}
	bothHealthy := map[string]events.WorkStatus{"cluster2": healthy("cluster2", 3), "cluster3": healthy("cluster3", 3)}
	oneStarting := map[string]events.WorkStatus{"cluster2": healthy("cluster2", 3),
		"cluster3": {Cluster: "cluster3", Generation: 1, Replicas: 3, AvailableReplicas: 1, Health: events.WorkUnhealthy}}
	eviction := func(mode string) events.Eviction {
		return events.Eviction{Cluster: "cluster1", Reason: events.EvictApplicationFailure, PurgeMode: mode, GracePeriodSeconds: 120, Replicas: 2, EvictedAt: t0}
	}
	tests := []struct {
		name      string
		placement events.PlacementDecision
		work      map[string]events.WorkStatus
		eviction  events.Eviction
		now       time.Duration
		want      Fate
	}{
		{"a healthy replacement releases the copy before the grace period ends",
			replaced, bothHealthy, eviction(events.PurgeGracefully), secs(30), Fate{Purge: PurgedReplacementHealthy}},
		{"a healthy replacement releases the copy at the end of the grace period",
			replaced, bothHealthy, eviction(events.PurgeGracefully), secs(120), Fate{Purge: PurgedReplacementHealthy}},
		{"a replacement that was never placed keeps the copy within the grace period",
			unplaced, nil, eviction(events.PurgeGracefully), secs(30), Fate{Next: t0.Add(secs(120))}},
		{"a replacement that was never placed holds the copy past the grace period",
			unplaced, nil, eviction(events.PurgeGracefully), secs(120), Fate{Held: HeldNotPlaced}},
		{"a placement that names no cluster is no replacement",
			events.PlacementDecision{Scheduled: true, Generation: 1}, nil, eviction(events.PurgeGracefully), secs(3600), Fate{Held: HeldNotPlaced}},
		{"a placed replacement that is not healthy keeps the copy within the grace period",
			replaced, oneStarting, eviction(events.PurgeGracefully), secs(30), Fate{Next: t0.Add(secs(120))}},
		{"a placed replacement that never became healthy holds the copy past the grace period",
			replaced, oneStarting, eviction(events.PurgeGracefully), 24 * time.Hour, Fate{Held: HeldNotHealthy}},
		{"a replacement that never reported holds the copy past the grace period",
			replaced, nil, eviction(events.PurgeGracefully), secs(121), Fate{Held: HeldNotHealthy}},
		{"purgeMode Directly purges at once, with no replacement at all",
			unplaced, nil, eviction(events.PurgeDirectly), 0, Fate{Purge: PurgedDirectly}},
		{"purgeMode Never keeps the copy even with a healthy replacement",
			replaced, bothHealthy, eviction(events.PurgeNever), 24 * time.Hour, Fate{}},
		{"a released copy has no fate left",
			replaced, bothHealthy, events.Eviction{Cluster: "cluster1", PurgeMode: events.PurgeGracefully, EvictedAt: t0, PurgedAt: at(secs(5)), PurgeReason: PurgedReplacementHealthy}, secs(30), Fate{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := divided222(seed000())
			in.Placement, in.Now = tt.placement, t0.Add(tt.now)
			in.Placement.Evictions = []events.Eviction{tt.eviction}
			if tt.work != nil {
				in.Work = tt.work
			}
			if diff := cmp.Diff(tt.want, OldCopy(in, tt.eviction)); diff != "" {
				t.Errorf("OldCopy (-want +got):\n%s", diff)
			}
		})
	}
}

func TestARescheduleForgetsTheEvictionsTheUserMayOverrule(t *testing.T) {
	purgedAt := at(secs(10))
	tests := []struct {
		name     string
		eviction events.Eviction
		want     bool
	}{
		{"a held copy is the user's to decide about", events.Eviction{PurgeMode: events.PurgeGracefully, Held: HeldNotPlaced}, true},
		{"a Never eviction ends at a reschedule", events.Eviction{PurgeMode: events.PurgeNever}, true},
		{"a purged eviction is forgotten", events.Eviction{PurgeMode: events.PurgeGracefully, PurgedAt: purgedAt}, true},
		{"a Directly eviction is forgotten", events.Eviction{PurgeMode: events.PurgeDirectly, PurgedAt: purgedAt}, true},
		{"a copy within its grace period stays kept", events.Eviction{PurgeMode: events.PurgeGracefully}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Forgotten(tt.eviction); got != tt.want {
				t.Errorf("Forgotten = %t, want %t", got, tt.want)
			}
		})
	}
}
