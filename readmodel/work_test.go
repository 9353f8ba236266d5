package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

// phaseCase is recorded events that put my-app's work in cluster1 in one
// phase.
type phaseCase struct {
	name      string
	decision  events.PlacementDecision
	reports   []events.WorkStatus
	health    []events.ClusterHealth
	wantPhase string
	wantMsg   string
	// wantHealth: as `get work -o wide` shows it (Healthy when not said).
	wantHealth string
}

func phaseCases() []phaseCase {
	placed := events.PlacementDecision{Key: myApp, Generation: 2, Scheduled: true, DecidedAt: t0,
		Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 3}}}
	moved := events.PlacementDecision{Key: myApp, Generation: 2, Scheduled: true, DecidedAt: t0,
		Clusters: []events.TargetCluster{{Name: "cluster2", Replicas: 3}}}
	kept := moved
	kept.Evictions = []events.Eviction{{Cluster: "cluster1", Reason: events.EvictTaintUntolerated, PurgeMode: events.PurgeGracefully, Message: "cluster1 is unreachable", EvictedAt: t0}}
	held := events.PlacementDecision{Key: myApp, Generation: 2, DecidedAt: t0, Error: "0/3 clusters are available"}
	held.Evictions = []events.Eviction{{Cluster: "cluster1", Reason: events.EvictApplicationFailure, PurgeMode: events.PurgeGracefully, Message: "cluster1 has been Unreachable", EvictedAt: t0,
		Held: "no replacement could be placed"}}
	purged := moved
	purged.Evictions = []events.Eviction{{Cluster: "cluster1", Reason: events.EvictTaintUntolerated, PurgeMode: events.PurgeDirectly, EvictedAt: t0}}
	running := events.WorkStatus{Key: myApp, Cluster: "cluster1", Generation: 2, Phase: events.WorkRunning, Replicas: 3, ReadyReplicas: 3, Health: events.WorkHealthy, CreatedAt: t0}
	deleted := running
	deleted.Phase = events.WorkDeleted
	refused := running
	refused.Phase, refused.Reason = events.WorkFailed, events.WorkReasonRefused
	refused.Message = `Deployment.apps "my-app" is invalid: spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`
	forbidden := running
	forbidden.Phase = events.WorkForbidden
	forbidden.Message = "Forbidden: the credentials lack patch on deployments.apps in namespace default; retried until cluster1's admin grants it"
	unreachable := events.ClusterHealth{Cluster: "cluster1", State: events.ClusterStateUnreachable, Since: t0}
	suspect := events.ClusterHealth{Cluster: "cluster1", State: events.ClusterStateSuspect, Ready: true, Since: t0}
	return []phaseCase{
		{name: "a placed cluster executord has not reported on is Pending", decision: placed, wantPhase: events.WorkPending, wantHealth: "-"},
		{name: "a reported cluster shows what executord reported", decision: placed, reports: []events.WorkStatus{running}, wantPhase: events.WorkRunning},
		{name: "a manifest the member refused is Failed with the member's message", decision: placed, reports: []events.WorkStatus{refused}, wantPhase: events.WorkFailed,
			wantMsg: refused.Message},
		{name: "an apply the member's RBAC forbids is Forbidden and says what the credentials lack", decision: placed, reports: []events.WorkStatus{forbidden},
			wantPhase: events.WorkForbidden, wantMsg: forbidden.Message},
		{name: "a cluster the placement no longer lists is Deleting", decision: moved, reports: []events.WorkStatus{running}, wantPhase: events.WorkDeleting},
		{name: "a cluster evicted with its copy kept is Evicted", decision: kept, reports: []events.WorkStatus{running}, wantPhase: WorkEvicted,
			wantMsg: "evicted (TaintUntolerated), copy kept (Gracefully): cluster1 is unreachable"},
		{name: "a copy held past its grace period says it is kept for want of a replacement", decision: held, reports: []events.WorkStatus{running}, wantPhase: WorkEvicted,
			wantMsg: "kept: no replacement (no replacement could be placed); evicted (ApplicationFailure): cluster1 has been Unreachable"},
		{name: "a lost cluster's held copy is Unknown and says it is kept for want of a replacement", decision: held, reports: []events.WorkStatus{running}, health: []events.ClusterHealth{unreachable}, wantPhase: WorkUnknown,
			wantMsg: "cluster Unreachable since 2026-12-01T14:00:00Z; last reported Evicted; kept: no replacement (no replacement could be placed); evicted (ApplicationFailure): cluster1 has been Unreachable", wantHealth: events.WorkHealthUnknown},
		{name: "a cluster evicted with its copy purged is Deleting", decision: purged, reports: []events.WorkStatus{running}, wantPhase: events.WorkDeleting},
		{name: "a lost cluster's work is Unknown, its health too", decision: placed, reports: []events.WorkStatus{running}, health: []events.ClusterHealth{unreachable}, wantPhase: WorkUnknown,
			wantMsg: "cluster Unreachable since 2026-12-01T14:00:00Z; last reported Running", wantHealth: events.WorkHealthUnknown},
		{name: "a lost cluster's evicted copy is Unknown, its health too", decision: kept, reports: []events.WorkStatus{running}, health: []events.ClusterHealth{unreachable}, wantPhase: WorkUnknown,
			wantMsg: "cluster Unreachable since 2026-12-01T14:00:00Z; last reported Evicted", wantHealth: events.WorkHealthUnknown},
		{name: "work reported Deleted from a lost cluster stays Deleted", decision: placed, reports: []events.WorkStatus{deleted}, health: []events.ClusterHealth{unreachable}, wantPhase: events.WorkDeleted},
		{name: "a suspect cluster is not lost", decision: placed, reports: []events.WorkStatus{running}, health: []events.ClusterHealth{suspect}, wantPhase: events.WorkRunning},
	}
}

// shownHealth is the health the case wants shown.
func (c phaseCase) shownHealth() string {
	if c.wantHealth == "" {
		return events.WorkHealthy
	}
	return c.wantHealth
}

// orDash is a health as the table shows it ("-" for none).
func orDash(health string) string {
	if health == "" {
		return "-"
	}
	return health
}

func (c phaseCase) record(t *testing.T) (decisions, reports, health []Stored) {
	r := &recorder{t: t}
	decisions = []Stored{r.stored(events.TypePlacementDecided, c.decision)}
	for _, s := range c.reports {
		reports = append(reports, r.stored(events.TypeWorkStatusChanged, s))
	}
	for _, h := range c.health {
		health = append(health, r.stored(events.TypeClusterHealthChanged, h))
	}
	return decisions, reports, health
}

// Every phase, from recorded events, as `get work` (Join) and `get
// KIND/NAME` / `describe work` (FindTemplate) see it: the same.
func TestWorkPhases(t *testing.T) {
	for _, c := range phaseCases() {
		t.Run(c.name, func(t *testing.T) {
			decisions, reports, health := c.record(t)
			ds := Decisions(decisions)
			w := Join(reports, ds, health)
			var got []string
			for _, s := range w.Items {
				if s.Cluster == "cluster1" {
					phase, msg := w.Phase(s)
					got = append(got, phase, msg, orDash(w.Health(s)))
				}
			}
			if diff := cmp.Diff([]string{c.wantPhase, c.wantMsg, c.shownHealth()}, got); diff != "" {
				t.Errorf("get work: cluster1's phase, message and health (-want +got):\n%s", diff)
			}
			tv, err := FindTemplate(ds, w, "deploy/my-app", "default")
			if err != nil {
				t.Fatal(err)
			}
			var fromTemplate []string
			for _, s := range tv.Work {
				if s.Cluster == "cluster1" {
					phase, msg := tv.Phase(s)
					fromTemplate = append(fromTemplate, phase, msg, orDash(tv.work.Health(s)))
				}
			}
			if diff := cmp.Diff(got, fromTemplate); diff != "" {
				t.Errorf("describe work disagrees with get work (-get work +describe work):\n%s", diff)
			}
			var fromIndex []string
			it := Fleet{Decisions: ds, Work: w}.TemplateIndex()[myApp]
			for _, s := range it.Work {
				if s.Cluster == "cluster1" {
					phase, msg := it.Phase(s)
					fromIndex = append(fromIndex, phase, msg, orDash(it.work.Health(s)))
				}
			}
			if diff := cmp.Diff(got, fromIndex); diff != "" {
				t.Errorf("the console's index disagrees with get work (-get work +index):\n%s", diff)
			}
		})
	}
}

func TestJoinListsEveryTemplateAndClusterInOrder(t *testing.T) {
	r := &recorder{t: t}
	decided := r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: myApp, Generation: 1, DecidedAt: t0,
		Clusters: []events.TargetCluster{{Name: "cluster2", Replicas: 1}, {Name: "cluster1", Replicas: 2}}})
	svc := r.stored(events.TypeWorkStatusChanged, events.WorkStatus{Key: mySvc, Cluster: "cluster1", Phase: events.WorkApplied})
	app := r.stored(events.TypeWorkStatusChanged, events.WorkStatus{Key: myApp, Cluster: "cluster2", Phase: events.WorkProgressing})
	w := Join([]Stored{svc, app}, Decisions([]Stored{decided}), nil)
	want := []events.WorkStatus{
		{Key: myApp, Cluster: "cluster1", Generation: 1, Phase: events.WorkPending, Replicas: 2, CreatedAt: t0},
		{Key: myApp, Cluster: "cluster2", Phase: events.WorkProgressing},
		{Key: mySvc, Cluster: "cluster1", Phase: events.WorkDeleting},
	}
	if diff := cmp.Diff(want, w.Items); diff != "" {
		t.Errorf("work (-want +got):\n%s", diff)
	}
}

func TestFindTemplate(t *testing.T) {
	r := &recorder{t: t}
	ds := Decisions([]Stored{
		r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: myApp, Binding: &events.Binding{Key: myApp}}),
		r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: mySvc}),
	})
	for _, tt := range []struct {
		name    string
		ref     string
		want    events.ObjectKey
		wantErr string
	}{
		{"KIND/NAME names one template", "svc/my-app", mySvc, ""},
		{"a name two templates share is ambiguous", "my-app", events.ObjectKey{}, "my-app names 2 templates: say which, e.g. deployment/my-app or service/my-app"},
		{"an unplaced template is not found", "cm/my-app", events.ObjectKey{}, "no placed template cm/my-app in namespace default (flotilla get placements -A lists them)"},
		{"an unplaced bare name is not found", "nope", events.ObjectKey{}, "no placed template */nope in namespace default (flotilla get placements -A lists them)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindTemplate(ds, Join(nil, ds, nil), tt.ref, "default")
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if got.Placement.Key != tt.want || got.Placement.Binding != nil {
				t.Errorf("placement %v (binding %v), want %v without its binding", got.Placement.Key, got.Placement.Binding, tt.want)
			}
		})
	}
}

func TestOldCopySaysWhatBecameOfAnEvictedCopy(t *testing.T) {
	purgedAt := t0
	tests := []struct {
		name     string
		eviction events.Eviction
		want     string
	}{
		{"a copy within its grace period is kept", events.Eviction{PurgeMode: events.PurgeGracefully}, "kept (Gracefully)"},
		{"a Never copy is kept", events.Eviction{PurgeMode: events.PurgeNever}, "kept (Never)"},
		{"a held copy is kept for want of a replacement", events.Eviction{PurgeMode: events.PurgeGracefully, Held: "the replacement is not healthy"},
			"kept: no replacement (the replacement is not healthy)"},
		{"a purged copy says why", events.Eviction{PurgeMode: events.PurgeGracefully, PurgedAt: &purgedAt, PurgeReason: "replacement healthy"}, "purged: replacement healthy"},
		{"a Directly copy is purged", events.Eviction{PurgeMode: events.PurgeDirectly, PurgeReason: "purgeMode Directly"}, "purged: purgeMode Directly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, OldCopy(tt.eviction)); diff != "" {
				t.Errorf("OldCopy (-want +got):\n%s", diff)
			}
		})
	}
}

// TestADependencyRunsWhereItsWorkloadIsPlaced: a ConfigMap propagateDeps
// carries has no placement of its own; where its workload is placed, its
// reported work is what executord says (Applied), not Deleting, which it
// was shown for as long as it ran. Where the workload left, it is.
func TestADependencyRunsWhereItsWorkloadIsPlaced(t *testing.T) {
	r := &recorder{t: t}
	cfg := events.ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "deps-config"}
	b := events.Binding{Key: myApp, Dependencies: []events.Dependency{{Key: cfg, APIVersion: "v1", Generation: 1}}}
	decided := r.stored(events.TypePlacementDecided, events.PlacementDecision{Key: myApp, Generation: 1, DecidedAt: t0, Binding: &b,
		Clusters: []events.TargetCluster{{Name: "cluster2", Replicas: 1}}})
	here := r.stored(events.TypeWorkStatusChanged, events.WorkStatus{Key: cfg, Cluster: "cluster2", Phase: events.WorkApplied})
	left := r.stored(events.TypeWorkStatusChanged, events.WorkStatus{Key: cfg, Cluster: "cluster1", Phase: events.WorkApplied})
	w := Join([]Stored{here, left}, Decisions([]Stored{decided}), nil)
	got := map[string]string{}
	for _, s := range w.Items {
		if s.Key == cfg {
			got[s.Cluster] = s.Phase
		}
	}
	if want := map[string]string{"cluster1": events.WorkDeleting, "cluster2": events.WorkApplied}; !cmp.Equal(want, got) {
		t.Errorf("the dependency's work: %v, want %v", got, want)
	}
}

// READY shows the replicas the template asks for while a failed decision
// keeps fewer placed (a scale-up the quota refused), as Karmada's READY
// reads the template's spec.replicas; placed and asked agree otherwise.
func TestReadyOfAskedShowsAScaleUpTheQuotaRefused(t *testing.T) {
	on := func(cs ...string) []events.TargetCluster {
		var out []events.TargetCluster
		for _, c := range cs {
			out = append(out, events.TargetCluster{Name: c, Replicas: 2})
		}
		return out
	}
	running := func(cs ...string) []events.WorkStatus {
		var out []events.WorkStatus
		for _, c := range cs {
			out = append(out, events.WorkStatus{Key: myApp, Cluster: c, Phase: events.WorkApplied, Health: events.WorkHealthy, Replicas: 2, ReadyReplicas: 2})
		}
		return out
	}
	for _, c := range []struct {
		name             string
		p                events.PlacementDecision
		work             []events.WorkStatus
		ready, asked     int32
		placedTotal      int32
		readyTotalPlaced int32
	}{
		{"a Divided scale-up to 4 refused keeps 2 placed: 2/4", events.PlacementDecision{Key: myApp, Clusters: on("cluster1"), Strategy: "Divided",
			Error: "QuotaExceeded: ...", Binding: &events.Binding{Replicas: 4}}, running("cluster1"), 2, 4, 2, 2},
		{"a Duplicated scale-up to 3 refused on 2 clusters: 4/6", events.PlacementDecision{Key: myApp, Clusters: on("cluster1", "cluster2"), Strategy: "Duplicated",
			Error: "QuotaExceeded: ...", Binding: &events.Binding{Replicas: 3}}, running("cluster1", "cluster2"), 4, 6, 4, 4},
		{"a scheduled placement: what is placed", events.PlacementDecision{Key: myApp, Scheduled: true, Clusters: on("cluster1"), Strategy: "Divided",
			Binding: &events.Binding{Replicas: 2}}, running("cluster1"), 2, 2, 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			tpl := Fleet{Decisions: []events.PlacementDecision{c.p}, Work: Work{Items: c.work}}.Template(myApp)
			if ready, asked := tpl.ReadyOfAsked(); ready != c.ready || asked != c.asked {
				t.Errorf("ReadyOfAsked %d/%d, want %d/%d", ready, asked, c.ready, c.asked)
			}
			if ready, placed := tpl.Totals(); ready != c.readyTotalPlaced || placed != c.placedTotal {
				t.Errorf("Totals %d/%d, want %d/%d (the members' counts, for status)", ready, placed, c.readyTotalPlaced, c.placedTotal)
			}
		})
	}
}
