package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/schedulerd"
)

// The bench's daemons: policyd and schedulerd as processes, and their CPU and memory.

type benchDaemons struct {
	mode   string
	cancel context.CancelFunc
	// instances is how many policyd and schedulerd processes run.
	instances int
	// exe is this binary.
	exe string
	// names are the daemon processes in start order: policyd and schedulerd,
	// then policyd-2, schedulerd-2... for each further instance.
	names []string
	// natsPIDs are an external NATS's server processes, counted in cpu.
	natsPIDs []int
	procs    map[string]*exec.Cmd
	waited   map[string]chan struct{}
	logs     map[string]*bytes.Buffer
	logMu    sync.Mutex
	exited   chan error
	group    *errgroup.Group
	buses    []*natsbus.Bus
	once     sync.Once
}

func startBenchDaemons(ctx context.Context, o *benchOptions, url string) (*benchDaemons, error) {
	ctx, cancel := context.WithCancel(ctx)
	ds := &benchDaemons{mode: o.daemons, cancel: cancel, instances: 1, natsPIDs: o.natsPIDs, procs: map[string]*exec.Cmd{}, waited: map[string]chan struct{}{},
		logs: map[string]*bytes.Buffer{}, exited: make(chan error, 2*max(o.instances, 1))}
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
				cfg := schedulerd.DefaultConfig()
				cfg.Instance = "bench"
				d, err := schedulerd.New(cfg, schedulerd.Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth(), Registry: prometheus.NewRegistry()})
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
	ds.exe = exe
	if err := ds.startInstance(ctx, o, url, 0); err != nil {
		ds.stop()
		return nil, err
	}
	return ds, nil
}

// startInstance starts the i-th (from 0) policyd and schedulerd; the first
// keeps a single instance's names.
func (ds *benchDaemons) startInstance(ctx context.Context, o *benchOptions, url string, i int) error {
	for _, daemon := range []string{"policyd", "schedulerd"} {
		name, instance := daemon, "bench"
		if i > 0 {
			name, instance = fmt.Sprintf("%s-%d", daemon, i+1), fmt.Sprintf("bench-%d", i+1)
		}
		if err := ds.startProcess(ctx, o, ds.exe, url, daemon, name, instance); err != nil {
			return err
		}
	}
	return nil
}

// startOthers starts the instances after the first (--instances; ctx is the
// daemons' own, ending them), once the first has read the world, so that
// the run measures placements, not instances joining.
func (ds *benchDaemons) startOthers(ctx context.Context, o *benchOptions, url string) error {
	for i := 1; i < o.instances; i++ {
		if err := ds.startInstance(ctx, o, url, i); err != nil {
			return err
		}
	}
	ds.instances = o.instances
	return nil
}

// startProcess starts daemon as process name with instance name instance.
func (ds *benchDaemons) startProcess(ctx context.Context, o *benchOptions, exe, url, daemon, name, instance string) error {
	args := []string{daemon, "--nats-url", url, "--metrics-addr", "", "--instance", instance, "--log-level", o.logLevel, "--log-format", "console"}
	if o.streamReplicas > 0 {
		args = append(args, "--stream-replicas", strconv.Itoa(o.streamReplicas))
	}
	if o.nats.Credentials != "" {
		args = append(args, "--creds", o.nats.Credentials)
	}
	if o.nats.TLSCA != "" {
		args = append(args, "--tls-ca", o.nats.TLSCA)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	if o.cpuProfile != "" {
		cmd.Env = append(os.Environ(), o.cpuProfileEnv+"="+o.cpuProfile+"."+name)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	buf := &bytes.Buffer{}
	w := &lockedWriter{mu: &ds.logMu, w: buf}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	waited := make(chan struct{})
	ds.names = append(ds.names, name)
	ds.procs[name], ds.logs[name], ds.waited[name] = cmd, buf, waited
	go func() {
		err := cmd.Wait()
		close(waited)
		if ctx.Err() == nil {
			ds.exited <- fmt.Errorf("%s: %v", name, err)
		}
	}()
	return nil
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
// nothing pending or unacknowledged: every policyd and schedulerd
// instance's (one per slot).
func waitConsumersIdle(ctx context.Context, bus *natsbus.Bus, ds *benchDaemons, within time.Duration) error {
	consumers := ds.consumers()
	deadline := time.Now().Add(within)
	for {
		idle, why := true, ""
		for _, c := range consumers {
			if err := bus.ConsumerIdle(ctx, c.stream, c.name); err != nil {
				idle, why = false, err.Error()
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

// consumers are the path's consumers with every schedulerd instance's.
func (ds *benchDaemons) consumers() []struct{ stream, name string } {
	consumers := slices.Clone(benchConsumers)
	for slot := 1; slot < ds.instances; slot++ {
		consumers = append(consumers,
			struct{ stream, name string }{events.StreamInput, natsbus.SlotConsumer(policyd.ConsumerName, slot)},
			struct{ stream, name string }{events.StreamPolicy, natsbus.SlotConsumer(schedulerd.PolicyConsumer, slot)},
			struct{ stream, name string }{events.StreamHealth, natsbus.SlotConsumer(schedulerd.HealthConsumer, slot)})
	}
	return consumers
}

// memory reads each daemon's peak resident set.
func (ds *benchDaemons) memory() []benchMemory {
	if ds.mode == "inprocess" {
		// Not schedulerd's own figure: the memory target is not judged.
		return []benchMemory{{Process: "bench", PeakBytes: vmHWM("self"),
			Measure: "VmHWM of this one process: nats-server, policyd, schedulerd and the load generator"}}
	}
	var out []benchMemory
	for _, name := range ds.names {
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
	switch {
	case ds.mode == "inprocess":
		self = "bench (nats-server, generator, policyd, schedulerd)"
	case len(ds.natsPIDs) > 0:
		self = "bench (generator)"
	}
	out := []benchCPU{{Process: self, Seconds: procCPU("self")}}
	for _, pid := range ds.natsPIDs {
		out = append(out, benchCPU{Process: fmt.Sprintf("nats-server pid %d", pid), Seconds: procCPU(strconv.Itoa(pid))})
	}
	for _, name := range ds.names {
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
