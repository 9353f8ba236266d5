package executord

import (
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

func TestDisposition(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	binding := &events.Binding{Replicas: 6}
	placed := func(cs ...events.TargetCluster) events.PlacementDecision {
		return events.PlacementDecision{Scheduled: true, Clusters: cs, Binding: binding}
	}
	evicted := func(p events.PlacementDecision, evs ...events.Eviction) events.PlacementDecision {
		p.Evictions = evs
		return p
	}
	graceful := events.Eviction{Cluster: "cluster1", Reason: events.EvictApplicationFailure, PurgeMode: events.PurgeGracefully, GracePeriodSeconds: 60, Replicas: 2, EvictedAt: t0}
	purged := graceful
	purged.PurgedAt, purged.PurgeReason = &t0, "replacement healthy"
	never := graceful
	never.PurgeMode = events.PurgeNever
	directly := graceful
	directly.PurgeMode, directly.Reason = events.PurgeDirectly, events.EvictTaintUntolerated
	elsewhere := graceful
	elsewhere.Cluster = "cluster3"
	noBinding := placed(events.TargetCluster{Name: "cluster1", Replicas: 2})
	noBinding.Binding = nil

	cases := []struct {
		name     string
		p        events.PlacementDecision
		fate     fate
		replicas int32
		why      string
	}{
		{"a cluster in the placement applies its replicas",
			placed(events.TargetCluster{Name: "cluster1", Replicas: 2}, events.TargetCluster{Name: "cluster2", Replicas: 4}), fateApply, 2, "placed with 2 replicas"},
		{"a cluster in a placement that carries no binding removes its copy",
			noBinding, fateRemove, 0, "the placement carries no binding"},
		{"a cluster the placement does not mention removes its copy",
			placed(events.TargetCluster{Name: "cluster2", Replicas: 6}), fateRemove, 0, "not placed in cluster1"},
		{"an evicted cluster whose graceful eviction is not purged keeps its copy with the replicas it had",
			evicted(placed(events.TargetCluster{Name: "cluster2", Replicas: 6}), graceful), fateKeep, 2,
			"evicted (ApplicationFailure): kept until the replacement is healthy or the grace period ends"},
		{"an evicted cluster with purgeMode Never keeps its copy until the eviction is released",
			evicted(placed(events.TargetCluster{Name: "cluster2", Replicas: 6}), never), fateKeep, 2,
			"evicted (ApplicationFailure): kept until the eviction is released (purgeMode Never)"},
		{"an evicted cluster whose eviction was purged removes its copy",
			evicted(placed(events.TargetCluster{Name: "cluster2", Replicas: 6}), purged), fateRemove, 0,
			"evicted (ApplicationFailure), purged: replacement healthy"},
		{"an evicted cluster with purgeMode Directly removes its copy at once",
			evicted(placed(events.TargetCluster{Name: "cluster2", Replicas: 6}), directly), fateRemove, 0,
			"evicted (TaintUntolerated), purgeMode Directly"},
		{"another cluster's eviction does not keep this cluster's copy",
			evicted(placed(events.TargetCluster{Name: "cluster2", Replicas: 6}), elsewhere), fateRemove, 0, "not placed in cluster1"},
		{"a purged old eviction and a kept new one of the same cluster keep the copy",
			evicted(placed(events.TargetCluster{Name: "cluster2", Replicas: 6}), purged, graceful), fateKeep, 2,
			"evicted (ApplicationFailure): kept until the replacement is healthy or the grace period ends"},
		{"a cluster placed again after an eviction applies: the clusters list is authoritative",
			evicted(placed(events.TargetCluster{Name: "cluster1", Replicas: 3}), graceful), fateApply, 3, "placed with 3 replicas"},
		{"a kept eviction keeps the copy even when no cluster fits any more",
			evicted(events.PlacementDecision{Error: "no cluster fits", Binding: binding}, graceful), fateKeep, 2,
			"evicted (ApplicationFailure): kept until the replacement is healthy or the grace period ends"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, replicas, why := disposition(c.p, "cluster1")
			if f != c.fate || replicas != c.replicas || why != c.why {
				t.Fatalf("want %s %d %q, got %s %d %q", c.fate, c.replicas, c.why, f, replicas, why)
			}
		})
	}
}

func TestStalePlacements(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	at := func(rev int64, d time.Duration) events.PlacementDecision {
		return events.PlacementDecision{BindingRevision: rev, DecidedAt: t0.Add(d)}
	}
	cases := []struct {
		name     string
		old, p   events.PlacementDecision
		outdated bool
	}{
		{"an older binding revision is stale", at(3, 0), at(2, time.Hour), true},
		{"a newer binding revision is not", at(3, 0), at(4, -time.Hour), false},
		{"the same revision decided earlier is stale (an eviction purged since)", at(3, time.Second), at(3, 0), true},
		{"the same revision decided later is not", at(3, 0), at(3, time.Second), false},
		{"the same decision again (a redelivery) is not: handling it is idempotent", at(3, 0), at(3, 0), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := stale(c.old, c.p); got != c.outdated {
				t.Fatalf("stale = %v, want %v", got, c.outdated)
			}
		})
	}
}
