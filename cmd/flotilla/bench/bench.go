// Package bench is `flotilla bench`: the placement path measured end to end
// through an embedded JetStream, policyd and schedulerd, with simulated
// clusters and a load generator.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
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
	memProfile string
	logLevel   string
	// instances is how many policyd and how many schedulerd processes run.
	instances int
	// streamReplicas is the stream and bucket replica count the bench and
	// its daemons ask for (0: the daemons' default).
	streamReplicas int
	// nats is the external NATS (--nats-url); its URL is "" for the embedded one.
	nats NATS
	// natsPIDs are the external NATS's server processes, whose CPU is counted.
	natsPIDs []int
	// cpuProfileEnv: see NewCommand.
	cpuProfileEnv string
}

// NATS is an external NATS the bench runs against: URL is "" unless
// --nats-url was given on the command line (the bench then starts its own).
type NATS struct {
	URL, Credentials, TLSCA string
}

// incomplete: not every template was placed; the printed result says so.
type incomplete struct{ error }

const (
	benchSource    = "/flotilla-bench"
	benchNamespace = "bench"
	benchLabel     = "flotilla.io/bench"
	benchWarmup    = "bench-warmup"
	// The targets of issue 3.
	benchTargetRate = 5000
	benchTargetMem  = 300 << 20
)

// NewCommand is `flotilla bench`. The daemons it starts as processes write
// their CPU profiles to the file the environment variable cpuProfileEnv
// names; external says which NATS --nats-url and the global connection
// flags name, if any; reported marks an error the command has already
// shown the user (the result it printed says how many templates were placed).
func NewCommand(cpuProfileEnv string, external func(*cobra.Command) NATS, reported func(error) error) *cobra.Command {
	o := &benchOptions{cpuProfileEnv: cpuProfileEnv}
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

With --nats-url (a server or a cluster's nodes) the bench runs against that
NATS instead, whose streams must be empty (a fresh server or cluster); give
its server processes' ids with --nats-pids so that their CPU is counted.
--instances N runs N policyd and N schedulerd processes (instances bench,
bench-2, ...), which share the work as separate instances do in production;
--stream-replicas sets the streams' copies (R1 or R3 on a 3-node cluster).

Before the measured run, one warm-up template must be placed; after it, the
latest placement of every template is read back and counted.`,
		Example: "  flotilla bench\n  flotilla bench --clusters 100 --templates 10000 --strategy dynamic -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("log-level") {
				o.logLevel, _ = cmd.Flags().GetString("log-level")
			}
			o.nats = external(cmd)
			res, err := runBench(cmd.Context(), cmd.ErrOrStderr(), o)
			if res != nil {
				if perr := printBench(cmd.OutOrStdout(), o.output, res); perr != nil && err == nil {
					err = perr
				}
			}
			var short incomplete
			if errors.As(err, &short) {
				return reported(err)
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
	c.Flags().StringVar(&o.memProfile, "memprofile", "", "with --daemons inprocess: write an allocation profile of this process (daemons included) to this file when the last placement is stored")
	c.Flags().StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the measured run to this file (with --daemons process, each daemon also writes its whole run to FILE.policyd and FILE.schedulerd)")
	c.Flags().IntVar(&o.instances, "instances", 1, "policyd and schedulerd processes of each (with --daemons process)")
	c.Flags().IntVar(&o.streamReplicas, "stream-replicas", 0, "copies of each stream and bucket (default: 3 on a cluster of three or more nodes, else 1)")
	c.Flags().IntSliceVar(&o.natsPIDs, "nats-pids", nil, "with --nats-url: process ids of its nats-servers on this machine, whose CPU counts in CPU per placement")
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
	// Instances is how many policyd and schedulerd processes of each ran.
	Instances int `json:"instances"`
	// NATS is "embedded" or the external URLs; StreamReplicas the streams' copies.
	NATS           string `json:"nats"`
	StreamReplicas int    `json:"streamReplicas"`

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
	if o.instances < 1 {
		errs = append(errs, errors.New("--instances: must be at least 1"))
	}
	if o.memProfile != "" && o.daemons != "inprocess" {
		errs = append(errs, errors.New("--memprofile: needs --daemons inprocess (the daemons' allocations are in their own processes otherwise)"))
	}
	if o.instances > 1 && o.daemons != "process" {
		errs = append(errs, errors.New("--instances: more than one needs --daemons process"))
	}
	if o.streamReplicas < 0 {
		errs = append(errs, errors.New("--stream-replicas: must not be negative"))
	}
	if o.nats.URL == "" && len(o.natsPIDs) > 0 {
		errs = append(errs, errors.New("--nats-pids: only with --nats-url (the embedded server's CPU is the bench's own)"))
	}
	if o.nats.URL != "" && o.dataDir != "" {
		errs = append(errs, errors.New("--data-dir: not with --nats-url (the external servers keep their own storage)"))
	}
	for _, pid := range o.natsPIDs {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/stat", pid)); err != nil {
			errs = append(errs, fmt.Errorf("--nats-pids: no process %d on this machine", pid))
		}
	}
	return errors.Join(errs...)
}

func runBench(ctx context.Context, progress io.Writer, o *benchOptions) (*benchResult, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	res := &benchResult{Clusters: o.clusters, Templates: o.templates, Strategy: o.strategy, Daemons: o.daemons, Rate: o.rate,
		Instances: o.instances, NATS: "embedded"}
	res.Machine.CPUs, res.Machine.GOMAXPROCS, res.Machine.GoVersion = goruntime.NumCPU(), goruntime.GOMAXPROCS(0), goruntime.Version()
	res.Machine.LoadBefore = loadavg()
	res.Machine.StartedAt = time.Now().UTC().Format(time.RFC3339)
	res.Targets.PlacementsPerSecond, res.Targets.SchedulerdPeakBytes = benchTargetRate, benchTargetMem
	say := func(format string, args ...any) { fmt.Fprintf(progress, "bench: "+format+"\n", args...) }

	bus, url, cleanup, err := benchBus(ctx, o, res)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	res.StreamReplicas = bus.StreamReplicas()

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
	if o.instances > 1 {
		if err := ds.startOthers(dctx, o, url); err != nil {
			return nil, err
		}
		if err := waitConsumersIdle(ctx, bus, ds, 60*time.Second); err != nil {
			return nil, fmt.Errorf("daemons did not start: %w%s", err, ds.logTail())
		}
	}
	if err := waitPartitionsShared(ctx, bus, ds, 60*time.Second); err != nil {
		return nil, fmt.Errorf("%w%s", err, ds.logTail())
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
	msgs := make([]subjected, o.templates)
	for i, k := range keys {
		obj, err := benchTemplate(k.Name, int64(10+i%10))
		if err != nil {
			return nil, err
		}
		e, err := events.New(events.TypeObjectApplied, benchSource, k.String(), obj)
		if err != nil {
			return nil, err
		}
		msgs[i] = subjected{events.InputSubject(k), e}
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
		say("%v with %d/%d placements stored%s%s", err, max(n, 1)-1, o.templates, ds.stuck(ctx, bus, keys), ds.logTail())
	}
	if o.cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	res.Memory = ds.memory()
	cpuAfter := ds.cpu()
	if o.memProfile != "" { // after the figures: writing it costs CPU and memory
		if err := writeAllocProfile(o.memProfile); err != nil {
			return nil, err
		}
	}
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
	if st, err := bus.StreamState(rctx, events.StreamDeadLetter); err == nil {
		res.DeadLetters = st.Messages
	}
	res.Machine.LoadAfter = loadavg()
	if res.Placements < o.templates {
		return res, incomplete{fmt.Errorf("only %d of %d templates were placed", res.Placements, o.templates)}
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
	fmt.Fprintf(w, "  nats            %s, %d stream replicas, %d instance(s) of policyd and of schedulerd\n", r.NATS, r.StreamReplicas, r.Instances)
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

// writeAllocProfile writes the process's allocation profile (every
// allocation since it started, sampled) to path.
func writeAllocProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC() // the profile is as of the last collection
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
