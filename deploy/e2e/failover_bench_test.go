package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// TestBenchFailoverTimings is `make bench-failover`: it measures, on the
// sandbox and with healthd's production defaults (probe every 2 s, 2 s
// timeout, 3 failures), how long each step of a cluster failover takes, over
// FLOTILLA_BENCH_ROUNDS rounds (default 3), and prints a table. It asserts
// nothing about the figures (they go to docs/failover.md), only that each
// round completes. Skipped unless FLOTILLA_BENCH_FAILOVER=1.
func TestBenchFailoverTimings(t *testing.T) {
	if os.Getenv("FLOTILLA_BENCH_FAILOVER") != "1" {
		t.Skip("a benchmark: run it with `make bench-failover`")
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("FLOTILLA_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	const toleration = 10 * time.Second
	s := newSystem(t)
	cluster1 := s.stoppable("cluster1")
	for _, d := range []string{"policyd", "schedulerd", "executord"} {
		s.start(d)
	}
	// healthd with its defaults (the e2e helper's 1 s probe interval overridden).
	s.start("healthd", "--probe-interval", "2s")
	s.joinAll()
	ns := uniqueNS("failbench")
	t.Cleanup(func() { s.deleteNamespace(ns) })

	type round struct {
		stopTook, detect, probing, toPlacement, toApplied, toHealthy, returnReady, toPurged time.Duration
	}
	var results []round
	for r := 0; r < rounds; r++ {
		name := fmt.Sprintf("web-%d", r)
		s.applyYAML(name+".yaml", dividedWithFailover(ns, name, int(toleration/time.Second), "Gracefully", 600))
		expectMembers(s, name+" at 2/2/2", ns, name, map[string]int32{"cluster1": 2, "cluster2": 2, "cluster3": 2})

		stopAt := time.Now()
		cluster1.stop()
		stopTook := time.Since(stopAt)
		expectMembers(s, name+" at 3/3", ns, name, map[string]int32{"cluster2": 3, "cluster3": 3})
		// Let the work statuses of the healthy replacement land.
		eventually(t, 60*time.Second, "the old copy's purge", func() error {
			p, err := s.latestPlacement(ns, name)
			if err != nil {
				return err
			}
			if len(p.Evictions) != 1 || p.Evictions[0].Kept() {
				return fmt.Errorf("evictions %+v", p.Evictions)
			}
			return nil
		})
		startAt := time.Now()
		cluster1.start()
		eventually(t, 120*time.Second, "the old copy gone from cluster1", func() error {
			got, err := s.memberReplicas(ns, name, "cluster1")
			if err != nil {
				return err
			}
			if got["cluster1"] != -1 {
				return fmt.Errorf("still there")
			}
			return nil
		})
		eventually(t, 60*time.Second, "cluster1 Ready", func() error {
			if h := s.lastHealth("cluster1", stopAt); h == nil || h.State != "Ready" {
				return fmt.Errorf("%+v", h)
			}
			return nil
		})

		// Read what happened from the bus.
		lost := s.firstHealth("cluster1", stopAt, func(h events.ClusterHealth) bool { return h.State == "NotReady" || h.State == "Unreachable" })
		back := s.firstHealth("cluster1", startAt, func(h events.ClusterHealth) bool { return h.State == "Ready" })
		if lost == nil || back == nil {
			t.Fatalf("round %d: no NotReady/Unreachable or Ready transition recorded", r)
		}
		expiry := lost.Since.Add(toleration)
		var evictedAt time.Time
		for _, rec := range replayPayloads[events.FailoverRecord](s, "flotilla.failover.>", stopAt, events.TypeFailoverEvicted) {
			if rec.Key.Name == name && rec.Eviction.Cluster == "cluster1" {
				evictedAt = rec.At
			}
		}
		applied, healthy := map[string]time.Time{}, map[string]time.Time{}
		for _, st := range replayPayloads[events.WorkStatus](s, "flotilla.work.>", stopAt, events.TypeWorkStatusChanged) {
			if st.Key.Name != name || st.Cluster == "cluster1" || st.Replicas != 3 {
				continue
			}
			if _, ok := applied[st.Cluster]; !ok {
				applied[st.Cluster] = st.UpdatedAt
			}
			if _, ok := healthy[st.Cluster]; !ok && st.Health == events.WorkHealthy {
				healthy[st.Cluster] = st.UpdatedAt
			}
		}
		var purgedAt time.Time
		for _, st := range replayPayloads[events.WorkStatus](s, "flotilla.work.>", startAt, events.TypeWorkDeleted) {
			if st.Key.Name == name && st.Cluster == "cluster1" {
				purgedAt = st.UpdatedAt
			}
		}
		if evictedAt.IsZero() || len(applied) != 2 || len(healthy) != 2 || purgedAt.IsZero() {
			t.Fatalf("round %d: incomplete record: evicted %v applied %v healthy %v purged %v", r, evictedAt, applied, healthy, purgedAt)
		}
		latest := func(m map[string]time.Time) time.Time {
			var l time.Time
			for _, v := range m {
				if v.After(l) {
					l = v
				}
			}
			return l
		}
		res := round{
			stopTook:    stopTook,
			detect:      lost.Since.Sub(stopAt),
			probing:     lost.Since.Sub(deref(lost.FailingSince, lost.Since)),
			toPlacement: evictedAt.Sub(expiry),
			toApplied:   latest(applied).Sub(expiry),
			toHealthy:   latest(healthy).Sub(expiry),
			returnReady: back.Since.Sub(startAt),
			toPurged:    purgedAt.Sub(startAt),
		}
		t.Logf("round %d: %+v", r, res)
		// The next round's copy in cluster1 must be able to start within its
		// toleration: wait for cluster1's controllers.
		s.canaryRuns("cluster1", ns)
		results = append(results, res)
	}

	col := func(f func(round) time.Duration) string {
		var ds []time.Duration
		for _, r := range results {
			ds = append(ds, f(r))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return fmt.Sprintf("%v\t%v\t%v", ds[0].Round(10*time.Millisecond), ds[len(ds)/2].Round(10*time.Millisecond), ds[len(ds)-1].Round(10*time.Millisecond))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "failover timings over %d rounds (healthd defaults; tolerationSeconds %d; min / median / max)\n", len(results), int(toleration/time.Second))
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "STEP\tMIN\tMEDIAN\tMAX")
	fmt.Fprintf(w, "make cluster-stop takes\t%s\n", col(func(r round) time.Duration { return r.stopTook }))
	fmt.Fprintf(w, "detection: stop begins -> NotReady/Unreachable\t%s\n", col(func(r round) time.Duration { return r.detect }))
	fmt.Fprintf(w, "first failed probe -> NotReady/Unreachable\t%s\n", col(func(r round) time.Duration { return r.probing }))
	fmt.Fprintf(w, "toleration expiry -> new placement\t%s\n", col(func(r round) time.Duration { return r.toPlacement }))
	fmt.Fprintf(w, "toleration expiry -> new replicas applied\t%s\n", col(func(r round) time.Duration { return r.toApplied }))
	fmt.Fprintf(w, "toleration expiry -> new replicas healthy\t%s\n", col(func(r round) time.Duration { return r.toHealthy }))
	fmt.Fprintf(w, "cluster-start begins -> Ready\t%s\n", col(func(r round) time.Duration { return r.returnReady }))
	fmt.Fprintf(w, "cluster-start begins -> old copy purged\t%s\n", col(func(r round) time.Duration { return r.toPurged }))
	_ = w.Flush()
	fmt.Println(b.String())
}

// replayed is one line of `flotilla replay -o json`.
type replayed struct {
	Subject string `json:"subject"`
	Event   struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	} `json:"event"`
}

// replayPayloads decodes the payloads of one event type on subject since t.
func replayPayloads[T any](s *system, subject string, since time.Time, typ events.Type) []T {
	s.t.Helper()
	ago := time.Since(since) + time.Second
	out := s.mustCLI("replay", "--since", ago.Round(time.Second).String(), "--subject", subject, "-o", "json")
	var res []T
	if os.Getenv("FLOTILLA_BENCH_DEBUG") != "" {
		s.t.Logf("replay %s since %s: %s", subject, ago, tail(out, 2000))
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r replayed
		if err := json.Unmarshal([]byte(line), &r); err != nil || events.Type(r.Event.Type) != typ {
			continue
		}
		var v T
		if json.Unmarshal(r.Event.Data, &v) == nil {
			res = append(res, v)
		}
	}
	return res
}

func (s *system) firstHealth(cluster string, since time.Time, match func(events.ClusterHealth) bool) *events.ClusterHealth {
	for _, h := range replayPayloads[events.ClusterHealth](s, "flotilla.health.>", since, events.TypeClusterHealthChanged) {
		if h.Cluster == cluster && !h.Since.Before(since) && match(h) {
			return &h
		}
	}
	return nil
}

func (s *system) lastHealth(cluster string, since time.Time) *events.ClusterHealth {
	var last *events.ClusterHealth
	for _, h := range replayPayloads[events.ClusterHealth](s, "flotilla.health.>", since, events.TypeClusterHealthChanged) {
		if h.Cluster == cluster {
			last = &h
		}
	}
	return last
}

func deref(t *time.Time, def time.Time) time.Time {
	if t == nil {
		return def
	}
	return *t
}
