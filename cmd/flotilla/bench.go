package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/schedulerd"
)

// benchOptions are the flags of `flotilla bench`.
type benchOptions struct {
	clusters   int
	templates  int
	dataDir    string
	strategy   string
	output     string
	daemons    string
	rate       int
	timeout    time.Duration
	cpuProfile string
	logLevel   string
}

const (
	benchSource    = "/flotilla-bench"
	benchNamespace = "bench"
	benchLabel     = "flotilla.io/bench"
	benchWarmup    = "bench-warmup"
	// The targets of issue 3.
	benchTargetRate = 5000
	benchTargetMem  = 300 << 20
)

func newBench(g *globals) *cobra.Command {
	o := &benchOptions{}
	c := &cobra.Command{
		Use:   "bench [--clusters 100] [--templates 10000] [--strategy static|dynamic|duplicated] [-o json]",
		Short: "Measure placements per second through an embedded JetStream, policyd and schedulerd",
		Long: `Measure the whole placement path as it runs in production: an embedded
nats-server with JetStream file storage (under --data-dir), policyd and
schedulerd as their own processes (this binary's policyd and schedulerd
commands) connected to it, and a load generator in this process.

Clusters are simulated: for each one a registration, a Ready health report
and a capacity report (serving apps/v1 Deployments) are published directly,
as policyd and healthd would; no member cluster exists, and healthd and
executord do not run. One PropagationPolicy in namespace "bench" selects
every Deployment, with the replica strategy --strategy over all clusters:
static (Divided/Weighted, static weights 1-3 by region label, the default),
dynamic (Divided/Weighted by AvailableReplicas) or duplicated. Then
--templates Deployments are published as io.flotilla.object.applied.v1 on
the input subjects, as flotilla apply does, asynchronously.

Measured, from the first template published to the last placement stored:
placements per second (target 5,000), and per template the decision latency
from publish to the placement's JetStream storage time (p50, p99, max). The
peak memory of each daemon is its process's peak resident set (VmHWM in
/proc/<pid>/status; target for schedulerd: under 300 MB). With --daemons
inprocess both daemons run in this process instead (for --cpuprofile), and
the memory figure is this whole process's, nats-server included.

Before the measured run, one warm-up template must be placed; after it, the
latest placement of every template is read back and counted.`,
		Example: "  flotilla bench\n  flotilla bench --clusters 100 --templates 10000 --strategy dynamic -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("log-level") {
				o.logLevel = g.logLevel
			}
			res, err := runBench(cmd.Context(), cmd.ErrOrStderr(), o)
			if res != nil {
				if perr := printBench(cmd.OutOrStdout(), o.output, res); perr != nil && err == nil {
					err = perr
				}
			}
			return err
		},
	}
	c.Flags().IntVar(&o.clusters, "clusters", 100, "simulated member clusters")
	c.Flags().IntVar(&o.templates, "templates", 10000, "Deployments published under the one policy")
	c.Flags().StringVar(&o.dataDir, "data-dir", "", "JetStream storage directory; must be empty (default: a temporary directory, removed afterwards)")
	c.Flags().StringVar(&o.strategy, "strategy", "static", "replica strategy of the policy: static, dynamic or duplicated")
	c.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	c.Flags().StringVar(&o.daemons, "daemons", "process", "run policyd and schedulerd as child processes (process) or in this process (inprocess)")
	c.Flags().IntVar(&o.rate, "rate", 0, "templates published per second (0: as fast as the bus takes them)")
	c.Flags().DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up when the last placement has not been stored by then")
	c.Flags().StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measured run (this process: use with --daemons inprocess)")
	o.logLevel = "warn"
	return c
}

// benchResult is what `flotilla bench` reports (-o json prints it as is).
type benchResult struct {
	Clusters  int    `json:"clusters"`
	Templates int    `json:"templates"`
	Strategy  string `json:"strategy"`
	Daemons   string `json:"daemons"`
	Rate      int    `json:"publishRate,omitempty"`

	// Placements is the number of templates whose placement was stored in the run.
	Placements    int     `json:"placements"`
	Scheduled     int     `json:"scheduled"`
	Unschedulable int     `json:"unschedulable"`
	DeadLetters   uint64  `json:"deadLetters"`
	Seconds       float64 `json:"seconds"`
	PublishSecs   float64 `json:"publishSeconds"`
	PerSecond     float64 `json:"placementsPerSecond"`
	LatencyMs     struct {
		P50 float64 `json:"p50"`
		P90 float64 `json:"p90"`
		P99 float64 `json:"p99"`
		Max float64 `json:"max"`
	} `json:"latencyMs"`
	Memory []benchMemory `json:"memory"`
	// CPU is the processor time each process used in the measured run
	// (user + system, from /proc/<pid>/stat), a figure that does not depend
	// on what else the machine runs.
	CPU []benchCPU `json:"cpu,omitempty"`
	// CPUMsPerPlacement is the sum of CPU over placements.
	CPUMsPerPlacement float64 `json:"cpuMsPerPlacement,omitempty"`
	Sample            string  `json:"sample,omitempty"`

	Machine struct {
		CPUs        int    `json:"cpus"`
		GOMAXPROCS  int    `json:"gomaxprocs"`
		GoVersion   string `json:"goVersion"`
		LoadBefore  string `json:"loadavgBefore,omitempty"`
		LoadAfter   string `json:"loadavgAfter,omitempty"`
		StartedAt   string `json:"startedAt"`
		DataDir     string `json:"dataDir"`
		DataDirKept bool   `json:"dataDirKept"`
	} `json:"machine"`
	Targets struct {
		PlacementsPerSecond int   `json:"placementsPerSecond"`
		SchedulerdPeakBytes int64 `json:"schedulerdPeakBytes"`
		RateMet             bool  `json:"rateMet"`
		MemoryMet           bool  `json:"memoryMet"`
	} `json:"targets"`
}

// benchCPU is one process's processor time in the measured run.
type benchCPU struct {
	Process string  `json:"process"`
	Seconds float64 `json:"seconds"`
}

// benchMemory is one process's peak memory.
type benchMemory struct {
	Process   string `json:"process"`
	PeakBytes int64  `json:"peakBytes"`
	// Measure says what PeakBytes is.
	Measure string `json:"measure"`
}

func (o *benchOptions) validate() error {
	var errs []error
	if o.clusters < 1 {
		errs = append(errs, errors.New("--clusters: must be at least 1"))
	}
	if o.templates < 1 {
		errs = append(errs, errors.New("--templates: must be at least 1"))
	}
	if o.strategy != "static" && o.strategy != "dynamic" && o.strategy != "duplicated" {
		errs = append(errs, fmt.Errorf("--strategy %q: one of static, dynamic, duplicated", o.strategy))
	}
	if o.output != "text" && o.output != "json" {
		errs = append(errs, fmt.Errorf("-o %q: text or json", o.output))
	}
	if o.daemons != "process" && o.daemons != "inprocess" {
		errs = append(errs, fmt.Errorf("--daemons %q: process or inprocess", o.daemons))
	}
	if o.rate < 0 {
		errs = append(errs, errors.New("--rate: must not be negative"))
	}
	return errors.Join(errs...)
}

func runBench(ctx context.Context, progress io.Writer, o *benchOptions) (*benchResult, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	res := &benchResult{Clusters: o.clusters, Templates: o.templates, Strategy: o.strategy, Daemons: o.daemons, Rate: o.rate}
	res.Machine.CPUs, res.Machine.GOMAXPROCS, res.Machine.GoVersion = goruntime.NumCPU(), goruntime.GOMAXPROCS(0), goruntime.Version()
	res.Machine.LoadBefore = loadavg()
	res.Machine.StartedAt = time.Now().UTC().Format(time.RFC3339)
	res.Targets.PlacementsPerSecond, res.Targets.SchedulerdPeakBytes = benchTargetRate, benchTargetMem
	say := func(format string, args ...any) { fmt.Fprintf(progress, "bench: "+format+"\n", args...) }

	dir := o.dataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "flotilla-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("--data-dir: %w", err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			return nil, fmt.Errorf("--data-dir %s is not empty: the bench needs fresh streams", dir)
		}
		res.Machine.DataDirKept = true
	}
	res.Machine.DataDir = dir

	srv, err := natsbus.StartEmbedded("127.0.0.1:0", filepath.Join(dir, "jetstream"))
	if err != nil {
		return nil, err
	}
	defer srv.Shutdown()
	url := srv.URL()
	bus, err := natsbus.Connect(ctx, url, natsbus.Options{Name: "flotilla-bench"})
	if err != nil {
		return nil, err
	}
	defer bus.Close()
	if err := bus.EnsureStreams(ctx); err != nil {
		return nil, err
	}

	// The world: clusters, as policyd and healthd would announce them, and the policy, as applied.
	if err := publishBenchClusters(ctx, bus, o.clusters); err != nil {
		return nil, err
	}
	pol, err := benchPolicy(o.strategy)
	if err != nil {
		return nil, err
	}
	if err := publishApplied(bus, pol); err != nil {
		return nil, err
	}
	if err := bus.Flush(ctx); err != nil {
		return nil, err
	}
	say("%d clusters and policy %s/bench (%s) published; starting policyd and schedulerd (%s)", o.clusters, benchNamespace, o.strategy, o.daemons)

	// The daemons.
	dctx, stopDaemons := context.WithCancel(ctx)
	defer stopDaemons()
	ds, err := startBenchDaemons(dctx, o, url)
	if err != nil {
		return nil, err
	}
	defer ds.stop()

	keys := make([]events.ObjectKey, o.templates)
	index := make(map[string]int, o.templates)
	for i := range keys {
		keys[i] = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: benchNamespace, Name: fmt.Sprintf("app-%05d", i)}
		index[events.PlacementSubject(keys[i])] = i
	}
	warmKey := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: benchNamespace, Name: benchWarmup}

	// Warm-up: the policy accepted, the clusters known, one template placed.
	if err := waitConsumersIdle(ctx, bus, ds, 60*time.Second); err != nil {
		return nil, fmt.Errorf("daemons did not start: %w%s", err, ds.logTail())
	}
	warm, err := benchTemplate(warmKey.Name, 10)
	if err != nil {
		return nil, err
	}
	if err := publishApplied(bus, warm); err != nil {
		return nil, err
	}
	if _, err := waitPlacements(ctx, bus, ds, 1, time.Minute, nil); err != nil {
		return nil, fmt.Errorf("the warm-up template was not placed: %w%s", err, ds.logTail())
	}
	sample, err := latestPlacement(ctx, bus, warmKey)
	if err != nil {
		return nil, err
	}
	if !sample.Scheduled {
		return nil, fmt.Errorf("the warm-up template was not scheduled: %s", sample.Error)
	}
	res.Sample = fmt.Sprintf("%s: %d clusters, %s", sample.Strategy, len(sample.Clusters), sample.Division)
	if err := waitConsumersIdle(ctx, bus, ds, 60*time.Second); err != nil {
		return nil, err
	}
	// Placements stored from here on are the run's.
	_, fromSeq, err := placementState(ctx, bus)
	if err != nil {
		return nil, err
	}

	// The templates, built before the clock starts: the generator's JSON is not the path measured.
	type outgoing struct {
		subject string
		event   events.Event
	}
	msgs := make([]outgoing, o.templates)
	for i, k := range keys {
		obj, err := benchTemplate(k.Name, int64(10+i%10))
		if err != nil {
			return nil, err
		}
		e, err := events.New(events.TypeObjectApplied, benchSource, k.String(), obj)
		if err != nil {
			return nil, err
		}
		msgs[i] = outgoing{events.InputSubject(k), e}
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	say("publishing %d templates", o.templates)
	cpuBefore := ds.cpu()
	published := make([]time.Time, o.templates)
	start := time.Now()
	for i, m := range msgs {
		if o.rate > 0 {
			// Template i leaves at start + i/rate, whatever the delays before it.
			if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(o.rate))); d > 0 {
				time.Sleep(d)
			}
		}
		published[i] = time.Now()
		if err := bus.PublishAsync(m.subject, m.event); err != nil {
			return nil, fmt.Errorf("publish template %d: %w", i, err)
		}
	}
	if err := bus.Flush(ctx); err != nil {
		return nil, err
	}
	res.PublishSecs = time.Since(start).Seconds()
	msgs = nil

	// Done when every template's subject (and the warm-up's) holds a placement.
	lastSay := time.Now()
	n, err := waitPlacements(ctx, bus, ds, uint64(o.templates)+1, o.timeout, func(n uint64) {
		if time.Since(lastSay) >= 5*time.Second {
			say("%d/%d placements stored", max(n, 1)-1, o.templates)
			lastSay = time.Now()
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		say("%v with %d/%d placements stored%s", err, max(n, 1)-1, o.templates, ds.logTail())
	}
	if o.cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	res.Memory = ds.memory()
	cpuAfter := ds.cpu()
	total := 0.0
	for _, p := range cpuAfter {
		for _, b := range cpuBefore {
			if b.Process == p.Process {
				d := p.Seconds - b.Seconds
				res.CPU = append(res.CPU, benchCPU{Process: p.Process, Seconds: d})
				total += d
			}
		}
	}

	stored, err := placementTimes(ctx, bus, index, fromSeq+1)
	if err != nil {
		return nil, err
	}

	// The figures.
	var lat []time.Duration
	var last time.Time
	for i, t := range stored {
		if t.IsZero() {
			continue
		}
		lat = append(lat, max(t.Sub(published[i]), 0))
		if t.After(last) {
			last = t
		}
	}
	res.Placements = len(lat)
	if res.Placements > 0 {
		res.Seconds = last.Sub(published[0]).Seconds()
		res.PerSecond = float64(res.Placements) / res.Seconds
		slices.Sort(lat)
		pct := func(p float64) float64 {
			i := int(float64(len(lat))*p+0.5) - 1
			return float64(lat[min(max(i, 0), len(lat)-1)].Microseconds()) / 1000
		}
		res.LatencyMs.P50, res.LatencyMs.P90, res.LatencyMs.P99 = pct(0.50), pct(0.90), pct(0.99)
		res.LatencyMs.Max = float64(lat[len(lat)-1].Microseconds()) / 1000
		if total > 0 {
			res.CPUMsPerPlacement = total * 1000 / float64(res.Placements)
		}
	}
	res.Targets.RateMet = res.Placements == o.templates && res.PerSecond >= benchTargetRate
	for _, m := range res.Memory {
		if m.Process == "schedulerd" {
			res.Targets.MemoryMet = m.PeakBytes > 0 && m.PeakBytes < benchTargetMem
		}
	}

	// Read back: how many of the stored placements are scheduled, and no dead letter.
	stopDaemons()
	ds.stop()
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ps, err := bus.LatestPerSubject(rctx, events.StreamPlacement, events.AllPlacements)
	if err != nil {
		return res, err
	}
	for _, m := range ps {
		if _, ok := index[m.Subject]; !ok || m.Err != nil {
			continue
		}
		var p events.PlacementDecision
		if events.Decode(m.Event, &p) == nil && p.Scheduled {
			res.Scheduled++
		} else {
			res.Unschedulable++
		}
	}
	if st, err := bus.JetStream().Stream(rctx, events.StreamDeadLetter); err == nil {
		if info, err := st.Info(rctx); err == nil {
			res.DeadLetters = info.State.Msgs
		}
	}
	res.Machine.LoadAfter = loadavg()
	if res.Placements < o.templates {
		return res, exitError{fmt.Errorf("only %d of %d templates were placed", res.Placements, o.templates)}
	}
	return res, nil
}

func printBench(w io.Writer, format string, r *benchResult) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	fmt.Fprintf(w, "flotilla bench: %d templates, %d clusters, strategy %s, daemons %s\n", r.Templates, r.Clusters, r.Strategy, r.Daemons)
	fmt.Fprintf(w, "  machine         %d CPUs (GOMAXPROCS %d), %s, load average before %s, after %s\n", r.Machine.CPUs, r.Machine.GOMAXPROCS, r.Machine.GoVersion, r.Machine.LoadBefore, r.Machine.LoadAfter)
	fmt.Fprintf(w, "  placements      %d stored in %.2fs (templates published in %.2fs)\n", r.Placements, r.Seconds, r.PublishSecs)
	fmt.Fprintf(w, "  throughput      %.0f placements/s (target %d: %s)\n", r.PerSecond, r.Targets.PlacementsPerSecond, mark(r.Targets.RateMet))
	fmt.Fprintf(w, "  latency         p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms (template published -> placement stored)\n", r.LatencyMs.P50, r.LatencyMs.P90, r.LatencyMs.P99, r.LatencyMs.Max)
	for _, m := range r.Memory {
		fmt.Fprintf(w, "  memory          %-10s peak %.0f MB (%s)", m.Process, float64(m.PeakBytes)/(1<<20), m.Measure)
		if m.Process == "schedulerd" {
			fmt.Fprintf(w, ", target < %d MB: %s", r.Targets.SchedulerdPeakBytes>>20, mark(r.Targets.MemoryMet))
		}
		fmt.Fprintln(w)
	}
	if len(r.CPU) > 0 {
		parts := make([]string, len(r.CPU))
		for i, c := range r.CPU {
			parts[i] = fmt.Sprintf("%s %.2fs", c.Process, c.Seconds)
		}
		fmt.Fprintf(w, "  cpu             %.3f ms per placement (%s)\n", r.CPUMsPerPlacement, strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "  results         %d scheduled, %d unschedulable, %d dead letters\n", r.Scheduled, r.Unschedulable, r.DeadLetters)
	if r.Sample != "" {
		fmt.Fprintf(w, "  sample          %s\n", r.Sample)
	}
	if r.Machine.DataDirKept {
		fmt.Fprintf(w, "  data            %s (kept)\n", r.Machine.DataDir)
	}
	return nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// ---- the simulated world ----

func benchEvent(t events.Type, subject string, data any) (events.Event, error) {
	return events.New(t, benchSource, subject, data)
}

func publishBenchClusters(ctx context.Context, bus *natsbus.Bus, n int) error {
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	now := time.Now().UTC()
	for i := range n {
		name := fmt.Sprintf("member-%03d", i)
		region := fmt.Sprintf("r%d", i%10)
		reg := events.ClusterRegistration{Name: name, Generation: 1,
			Labels: map[string]string{benchLabel: "true", "region": region},
			Spec:   policy.ClusterSpec{APIEndpoint: "https://" + name + ".bench.invalid:6443", SyncMode: "Push", Provider: "bench", Region: region}}
		health := events.ClusterHealth{Cluster: name, Ready: true, State: "Ready", Reason: "ClusterReady", Since: now, ObservedAt: now,
			Conditions: []events.ClusterCondition{{Type: policy.ClusterConditionReady, Status: "True", Reason: "ClusterReady", LastTransitionTime: now}}}
		capacity := events.ClusterCapacity{Cluster: name, KubernetesVersion: "v1.37.2", Nodes: 10, ReadyNodes: 10,
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: q(strconv.Itoa(160 + 16*(i%8))), corev1.ResourceMemory: q("640Gi"), corev1.ResourcePods: q("1100")},
			Allocated:   corev1.ResourceList{corev1.ResourceCPU: q("20"), corev1.ResourceMemory: q("64Gi"), corev1.ResourcePods: q("120")},
			APIEnablements: []policy.APIEnablement{
				{GroupVersion: "apps/v1", Resources: []policy.APIResource{{Name: "deployments", Kind: "Deployment"}, {Name: "statefulsets", Kind: "StatefulSet"}}},
				{GroupVersion: "v1", Resources: []policy.APIResource{{Name: "configmaps", Kind: "ConfigMap"}, {Name: "services", Kind: "Service"}}},
			},
			ObservedAt: now}
		for _, p := range []struct {
			t       events.Type
			subject string
			data    any
		}{
			{events.TypeClusterRegistered, events.MemberSubject(name), reg},
			{events.TypeClusterHealthChanged, events.HealthSubject(name), health},
			{events.TypeClusterCapacityReported, events.CapacitySubject(name), capacity},
		} {
			e, err := benchEvent(p.t, name, p.data)
			if err != nil {
				return err
			}
			if err := bus.PublishAsync(p.subject, e); err != nil {
				return err
			}
		}
	}
	return bus.Flush(ctx)
}

// benchPolicy is the one PropagationPolicy: every Deployment of the bench
// namespace, on every bench cluster, with the strategy asked for.
func benchPolicy(strategy string) (map[string]any, error) {
	rs := map[string]any{}
	switch strategy {
	case "duplicated":
		rs["replicaSchedulingType"] = policy.ReplicaSchedulingTypeDuplicated
	case "dynamic":
		rs["replicaSchedulingType"] = policy.ReplicaSchedulingTypeDivided
		rs["replicaDivisionPreference"] = policy.DivisionPreferenceWeighted
		rs["weightPreference"] = map[string]any{"dynamicWeight": policy.DynamicWeightAvailableReplicas}
	default:
		var list []any
		for r := range 10 {
			list = append(list, map[string]any{
				"targetCluster": map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"region": fmt.Sprintf("r%d", r)}}},
				"weight":        int64(r%3 + 1),
			})
		}
		rs["replicaSchedulingType"] = policy.ReplicaSchedulingTypeDivided
		rs["replicaDivisionPreference"] = policy.DivisionPreferenceWeighted
		rs["weightPreference"] = map[string]any{"staticWeightList": list}
	}
	obj := map[string]any{
		"apiVersion": policy.PolicyAPIVersion,
		"kind":       policy.KindPropagationPolicy,
		"metadata":   map[string]any{"name": "bench", "namespace": benchNamespace},
		"spec": map[string]any{
			"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}},
			"placement": map[string]any{
				"clusterAffinity":   map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{benchLabel: "true"}}},
				"replicaScheduling": rs,
			},
		},
	}
	return validated(obj)
}

func benchTemplate(name string, replicas int64) (map[string]any, error) {
	labels := map[string]any{"app": name}
	obj := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": benchNamespace, "labels": labels},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "app", "image": "nginx:1.25.3",
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}},
				}}},
			},
		},
	}
	return validated(obj)
}

// validated runs policyd's validator, as flotilla apply does before publishing.
func validated(obj map[string]any) (map[string]any, error) {
	doc, errs, _ := validation.ValidateObject(obj)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = validation.Format(e)
		}
		return nil, fmt.Errorf("bench object invalid: %s", strings.Join(msgs, "; "))
	}
	return doc.Object, nil
}

func publishApplied(bus *natsbus.Bus, obj map[string]any) error {
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	k := policyd.KeyOf(av, kind, ns, name)
	e, err := events.New(events.TypeObjectApplied, benchSource, k.String(), obj)
	if err != nil {
		return err
	}
	return bus.PublishAsync(events.InputSubject(k), e)
}

func latestPlacement(ctx context.Context, bus *natsbus.Bus, k events.ObjectKey) (events.PlacementDecision, error) {
	var p events.PlacementDecision
	ms, err := bus.LatestPerSubject(ctx, events.StreamPlacement, events.PlacementSubject(k))
	if err != nil {
		return p, err
	}
	if len(ms) == 0 || ms[len(ms)-1].Err != nil {
		return p, fmt.Errorf("no placement for %s", k)
	}
	return p, events.Decode(ms[len(ms)-1].Event, &p)
}

// ---- observing placements ----

// placementState returns how many subjects of the placement stream hold a
// placement, and the stream's last sequence.
func placementState(ctx context.Context, bus *natsbus.Bus) (uint64, uint64, error) {
	st, err := bus.JetStream().Stream(ctx, events.StreamPlacement)
	if err != nil {
		return 0, 0, err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0, 0, err
	}
	return info.State.NumSubjects, info.State.LastSeq, nil
}

// waitPlacements polls the placement stream until n subjects hold a
// placement. It reads no message: the run is measured from the storage
// times afterwards (placementTimes), so observing costs the machine next
// to nothing.
func waitPlacements(ctx context.Context, bus *natsbus.Bus, ds *benchDaemons, n uint64, within time.Duration, progress func(uint64)) (uint64, error) {
	deadline := time.Now().Add(within)
	for {
		got, _, err := placementState(ctx, bus)
		if err == nil && got >= n {
			return got, nil
		}
		if progress != nil {
			progress(got)
		}
		if time.Now().After(deadline) {
			return got, fmt.Errorf("timed out after %s", within)
		}
		select {
		case err := <-ds.exited:
			return got, fmt.Errorf("a daemon exited: %v", err)
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}

// placementTimes reads the placement stream from sequence from on and
// returns, for each template of index, the storage time of its first
// placement (zero if none). It reads subjects and metadata only.
func placementTimes(ctx context.Context, bus *natsbus.Bus, index map[string]int, from uint64) ([]time.Time, error) {
	out := make([]time.Time, len(index))
	_, last, err := placementState(ctx, bus)
	if err != nil || last < from {
		return out, err
	}
	c, err := bus.JetStream().OrderedConsumer(ctx, events.StreamPlacement, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.AllPlacements}, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from})
	if err != nil {
		return nil, err
	}
	for {
		batch, err := c.Fetch(1000, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return out, err
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			if i, ok := index[m.Subject()]; ok && out[i].IsZero() {
				out[i] = md.Timestamp
			}
			if md.Sequence.Stream >= last {
				return out, nil
			}
		}
		if n == 0 {
			return out, fmt.Errorf("placement stream: nothing read past sequence %d", from)
		}
	}
}

// ---- the daemons ----

type benchDaemons struct {
	mode   string
	cancel context.CancelFunc
	procs  map[string]*exec.Cmd
	waited map[string]chan struct{}
	logs   map[string]*bytes.Buffer
	logMu  sync.Mutex
	exited chan error
	group  *errgroup.Group
	buses  []*natsbus.Bus
	once   sync.Once
}

func startBenchDaemons(ctx context.Context, o *benchOptions, url string) (*benchDaemons, error) {
	ctx, cancel := context.WithCancel(ctx)
	ds := &benchDaemons{mode: o.daemons, cancel: cancel, procs: map[string]*exec.Cmd{}, waited: map[string]chan struct{}{},
		logs: map[string]*bytes.Buffer{}, exited: make(chan error, 2)}
	if o.daemons == "inprocess" {
		g, gctx := errgroup.WithContext(ctx)
		ds.group = g
		for _, name := range []string{"policyd", "schedulerd"} {
			bus, err := natsbus.Connect(ctx, url, natsbus.Options{Name: "flotilla-bench-" + name})
			if err != nil {
				return nil, err
			}
			ds.buses = append(ds.buses, bus)
			var run func(context.Context) error
			switch name {
			case "policyd":
				d, err := policyd.New(policyd.Config{Instance: "bench"}, policyd.Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
				if err != nil {
					return nil, err
				}
				run = d.Run
			case "schedulerd":
				d, err := schedulerd.New(schedulerd.Config{Instance: "bench"}, schedulerd.Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth(), Registry: prometheus.NewRegistry()})
				if err != nil {
					return nil, err
				}
				run = d.Run
			}
			g.Go(func() error {
				err := run(gctx)
				if ctx.Err() == nil {
					ds.exited <- fmt.Errorf("%s: %v", name, err)
				}
				return err
			})
		}
		return ds, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"policyd", "schedulerd"} {
		cmd := exec.CommandContext(ctx, exe, name, "--nats-url", url, "--metrics-addr", "", "--instance", "bench", "--log-level", o.logLevel, "--log-format", "console")
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 10 * time.Second
		buf := &bytes.Buffer{}
		w := &lockedWriter{mu: &ds.logMu, w: buf}
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			ds.stop()
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		waited := make(chan struct{})
		ds.procs[name], ds.logs[name], ds.waited[name] = cmd, buf, waited
		go func() {
			err := cmd.Wait()
			close(waited)
			if ctx.Err() == nil {
				ds.exited <- fmt.Errorf("%s: %v", name, err)
			}
		}()
	}
	return ds, nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// consumerNames are the durable consumers the measured path runs through.
var benchConsumers = []struct{ stream, name string }{
	{events.StreamInput, policyd.ConsumerName},
	{events.StreamPolicy, schedulerd.PolicyConsumer},
	{events.StreamHealth, schedulerd.HealthConsumer},
}

// waitConsumersIdle waits until every consumer of the path exists and has
// nothing pending or unacknowledged.
func waitConsumersIdle(ctx context.Context, bus *natsbus.Bus, ds *benchDaemons, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		idle, why := true, ""
		for _, c := range benchConsumers {
			cons, err := bus.JetStream().Consumer(ctx, c.stream, c.name)
			if err != nil {
				idle, why = false, fmt.Sprintf("consumer %s: %v", c.name, err)
				break
			}
			info, err := cons.Info(ctx)
			if err != nil || info.NumPending > 0 || info.NumAckPending > 0 {
				idle, why = false, fmt.Sprintf("consumer %s busy", c.name)
				break
			}
		}
		if idle {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New(why)
		}
		select {
		case err := <-ds.exited:
			return err
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// memory reads each daemon's peak resident set.
func (ds *benchDaemons) memory() []benchMemory {
	if ds.mode == "inprocess" {
		// Not schedulerd's own figure: the memory target is not judged.
		return []benchMemory{{Process: "bench", PeakBytes: vmHWM("self"),
			Measure: "VmHWM of this one process: nats-server, policyd, schedulerd and the load generator"}}
	}
	var out []benchMemory
	for _, name := range []string{"schedulerd", "policyd"} {
		if p := ds.procs[name]; p != nil && p.Process != nil {
			out = append(out, benchMemory{Process: name, PeakBytes: vmHWM(strconv.Itoa(p.Process.Pid)), Measure: "VmHWM, peak resident set of the process"})
		}
	}
	return out
}

// cpu reads the processor time used so far by this process (nats-server,
// the load generator, and in-process daemons) and by each daemon process.
func (ds *benchDaemons) cpu() []benchCPU {
	self := "bench (nats-server, generator)"
	if ds.mode == "inprocess" {
		self = "bench (nats-server, generator, policyd, schedulerd)"
	}
	out := []benchCPU{{Process: self, Seconds: procCPU("self")}}
	for _, name := range []string{"policyd", "schedulerd"} {
		if p := ds.procs[name]; p != nil && p.Process != nil {
			out = append(out, benchCPU{Process: name, Seconds: procCPU(strconv.Itoa(p.Process.Pid))})
		}
	}
	return out
}

// procCPU returns the user + system time of /proc/<pid> in seconds, or 0.
func procCPU(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at "state".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	const clockTicks = 100 // USER_HZ, 100 on every Linux Go runs on
	return (utime + stime) / clockTicks
}

// vmHWM returns the peak resident set size of /proc/<pid>, or 0.
func vmHWM(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

func (ds *benchDaemons) stop() {
	ds.once.Do(func() {
		for _, p := range ds.procs {
			if p.Process != nil {
				_ = p.Process.Signal(os.Interrupt)
			}
		}
		for name, p := range ds.procs {
			select {
			case <-ds.waited[name]:
			case <-time.After(10 * time.Second):
				_ = p.Process.Kill()
				<-ds.waited[name]
			}
		}
		ds.cancel()
		if ds.group != nil {
			_ = ds.group.Wait()
		}
		for _, b := range ds.buses {
			b.Close()
		}
	})
}

func (ds *benchDaemons) logTail() string {
	ds.logMu.Lock()
	defer ds.logMu.Unlock()
	var sb strings.Builder
	for name, buf := range ds.logs {
		s := buf.String()
		if len(s) > 2000 {
			s = s[len(s)-2000:]
		}
		if s != "" {
			fmt.Fprintf(&sb, "\n--- %s log (tail) ---\n%s", name, s)
		}
	}
	return sb.String()
}
