package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/executord"
	"github.com/flotilla-io/flotilla/healthd"
	"github.com/flotilla-io/flotilla/internal/member"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/schedulerd"
)

// daemonFlags are the settings of the four daemons.
type daemonFlags struct {
	instance       string
	metricsAddr    string
	credentialsKey string
	maxReplicas    int32
	health         healthd.Config
	exec           executord.Config
	sched          schedulerd.Config
}

func defaultCredentialsKey() string {
	if v := os.Getenv("FLOTILLA_CREDENTIALS_KEY"); v != "" {
		return v
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = "."
	}
	return filepath.Join(dir, "flotilla", "credentials.key")
}

func (f *daemonFlags) register(c *cobra.Command, which string, defaultMetrics string) {
	f.health, f.exec, f.sched = healthd.DefaultConfig(), executord.DefaultConfig(), schedulerd.DefaultConfig()
	c.Flags().StringVar(&f.instance, "instance", "0", "instance name, used in event sources (/<daemon>/<instance>)")
	c.Flags().StringVar(&f.metricsAddr, "metrics-addr", defaultMetrics, "address of /metrics, /healthz and /readyz (empty: off)")
	if which == "healthd" || which == "executord" || which == "up" {
		c.Flags().StringVar(&f.credentialsKey, "credentials-key", "", "credentials key file (created if missing); kubeconfigs on the bus are sealed to it (default: <data-dir>/credentials.key under up, else "+defaultCredentialsKey()+")")
	}
	if which == "policyd" || which == "up" {
		c.Flags().Int32Var(&f.maxReplicas, "max-replicas", 0, "reject a template whose replicas (spec.replicas of a Deployment, StatefulSet or ReplicaSet, spec.parallelism of a Job) exceed this, with an object.rejected event giving the reason, instead of placing it (0: no limit; docs/policy.md)")
	}
	if which == "healthd" || which == "up" {
		c.Flags().DurationVar(&f.health.ProbeInterval, "probe-interval", f.health.ProbeInterval, "how often each member's /readyz is probed; a lost member is NotReady/Unreachable (tainted NoSchedule) after at worst failure-threshold × probe-interval + probe-timeout ("+f.health.Detection().String()+" with the defaults)")
		c.Flags().DurationVar(&f.health.ProbeTimeout, "probe-timeout", f.health.ProbeTimeout, "deadline of one probe (above probe-interval, detection takes probe-interval + failure-threshold × probe-timeout)")
		c.Flags().IntVar(&f.health.FailureThreshold, "failure-threshold", f.health.FailureThreshold, "failed probes in a row before a member is NotReady/Unreachable (one fewer leaves it Suspect, still schedulable)")
		c.Flags().IntVar(&f.health.SuccessThreshold, "success-threshold", f.health.SuccessThreshold, "good probes in a row before a NotReady/Unreachable member is Ready again")
		c.Flags().DurationVar(&f.health.CapacityInterval, "capacity-interval", f.health.CapacityInterval, "how often member Nodes and Pods are read for capacity")
		c.Flags().DurationVar(&f.health.NoExecuteAfter, "no-execute-after", f.health.NoExecuteAfter, "default cluster taint policy: a member NotReady/Unreachable this long is also tainted NoExecute, which moves workloads that do not tolerate it; it arrives this long after detection (0: never taint NoExecute)")
		c.Flags().DurationVar(&f.health.SnapshotInterval, "snapshot-interval", f.health.SnapshotInterval, "how often every member's health is published as one snapshot, for consumers that resync (0: off)")
		c.Flags().StringVar(&f.health.TaintPolicyFile, "taint-policy", "", "file of Karmada ClusterTaintPolicy YAML (policy.karmada.io/v1alpha1, plus Flotilla's spec.addAfterSeconds) replacing the default taint policy and --no-execute-after; see docs/failover.md")
	}
	if which == "schedulerd" || which == "up" {
		c.Flags().Float64Var(&f.sched.Evictions.PerSecond, "eviction-rate", f.sched.Evictions.PerSecond, "failover evictions per second at most, so an outage does not stampede the remaining clusters (0: no limit)")
		c.Flags().IntVar(&f.sched.Evictions.Burst, "eviction-burst", f.sched.Evictions.Burst, "evictions allowed at once before --eviction-rate applies")
		c.Flags().DurationVar(&f.sched.FailoverTick, "failover-tick", f.sched.FailoverTick, "how often tolerations, grace periods and deferred evictions are checked")
	}
	if which == "executord" || which == "up" {
		c.Flags().Float32Var(&f.exec.KubeAPIQPS, "kube-api-qps", f.exec.KubeAPIQPS, "queries per second to each member API server")
		c.Flags().IntVar(&f.exec.KubeAPIBurst, "kube-api-burst", f.exec.KubeAPIBurst, "burst of requests to each member API server")
		c.Flags().DurationVar(&f.exec.ResyncInterval, "resync-interval", f.exec.ResyncInterval, "how often member objects are read back (status, drift)")
	}
	if which == "executord" {
		c.Flags().StringVar(&f.exec.Cluster, "cluster", "", "pull mode: serve only this member cluster")
		c.Flags().StringVar(&f.exec.Kubeconfig, "kubeconfig", "", "pull mode: the member's kubeconfig (default: in-cluster credentials)")
	}
}

// cpuProfileEnv names a file a daemon writes its CPU profile to, from start
// to stop (flotilla bench --cpuprofile sets it for the daemons it starts).
const cpuProfileEnv = "FLOTILLA_CPUPROFILE"

func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		// The allocations of the whole run next to it, for what GC costs.
		if m, err := os.Create(path + ".allocs"); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(m, 0)
			m.Close()
		}
	}, nil
}

var daemonDocs = map[string]string{
	"policyd":    "Validate applied objects, match templates to policies, publish bindings",
	"schedulerd": "Place bindings on member clusters and explain every decision",
	"healthd":    "Probe member clusters and report health and capacity",
	"executord":  "Apply placed objects to member clusters and report their status",
}

var defaultMetricsAddr = map[string]string{"up": "127.0.0.1:9100", "policyd": "127.0.0.1:9101", "schedulerd": "127.0.0.1:9102", "executord": "127.0.0.1:9103", "healthd": "127.0.0.1:9104"}

func newDaemonCmd(g *globals, name string) *cobra.Command {
	f := &daemonFlags{}
	c := &cobra.Command{
		Use:   name,
		Short: daemonDocs[name],
		Long: daemonDocs[name] + `, as its own process against the NATS at --nats-url.
A daemon killed and restarted resumes where it stopped: its durable consumer
keeps its position and it rebuilds its state from the streams.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.logger()
			if err != nil {
				return err
			}
			defer log.Sync()
			if path := os.Getenv(cpuProfileEnv); path != "" {
				stop, err := startCPUProfile(path)
				if err != nil {
					return err
				}
				defer stop()
			}
			if f.credentialsKey == "" {
				f.credentialsKey = defaultCredentialsKey()
			}
			rt, err := newRuntime(cmd.Context(), g, log, f.metricsAddr)
			if err != nil {
				return err
			}
			defer rt.bus.Close()
			run, err := buildDaemon(name, f, rt)
			if err != nil {
				return err
			}
			return rt.serve(cmd.Context(), run)
		},
	}
	f.register(c, name, defaultMetricsAddr[name])
	return c
}

// runtime is what every daemon process shares: bus, logger, metrics, health.
type runtime struct {
	bus         *natsbus.Bus
	log         *zap.Logger
	reg         *prometheus.Registry
	health      *observe.Health
	metricsAddr string
}

func newRuntime(ctx context.Context, g *globals, log *zap.Logger, metricsAddr string) (*runtime, error) {
	events.Warm() // compile the event codec before the first event, not on it
	reg := observe.NewRegistry()
	bus, err := natsbus.Connect(ctx, g.natsURL, natsbus.Options{Name: "flotilla", Log: log, Metrics: natsbus.NewMetrics(reg)})
	if err != nil {
		return nil, err
	}
	h := observe.NewHealth()
	h.Add("nats", func() error {
		if !bus.Connected() {
			return fmt.Errorf("not connected")
		}
		return nil
	})
	return &runtime{bus: bus, log: log, reg: reg, health: h, metricsAddr: metricsAddr}, nil
}

// serve runs the daemons and the HTTP endpoints until ctx is done or one fails.
func (rt *runtime) serve(ctx context.Context, runs ...func(context.Context) error) error {
	grp, ctx := errgroup.WithContext(ctx)
	grp.Go(func() error { return observe.Serve(ctx, rt.metricsAddr, rt.reg, rt.health, rt.log) })
	for _, run := range runs {
		grp.Go(func() error { return run(ctx) })
	}
	err := grp.Wait()
	if ctx.Err() != nil && err == context.Canceled {
		return nil
	}
	return err
}

func buildDaemon(name string, f *daemonFlags, rt *runtime) (func(context.Context) error, error) {
	switch name {
	case "policyd":
		cfg := policyd.DefaultConfig()
		cfg.Instance, cfg.MaxReplicas = f.instance, f.maxReplicas
		d, err := policyd.New(cfg, policyd.Deps{Bus: rt.bus, Log: rt.log, Health: rt.health})
		if err != nil {
			return nil, err
		}
		return d.Run, nil
	case "schedulerd":
		cfg := f.sched
		cfg.Instance = f.instance
		d, err := schedulerd.New(cfg, schedulerd.Deps{Bus: rt.bus, Log: rt.log, Health: rt.health, Registry: rt.reg})
		if err != nil {
			return nil, err
		}
		return d.Run, nil
	case "healthd":
		cfg := f.health
		cfg.Instance, cfg.CredentialsKey = f.instance, f.credentialsKey
		d, err := healthd.New(cfg, healthd.Deps{Bus: rt.bus, Log: rt.log, Health: rt.health, Registry: rt.reg})
		if err != nil {
			return nil, err
		}
		return d.Run, nil
	case "executord":
		cfg := f.exec
		cfg.Instance, cfg.CredentialsKey = f.instance, f.credentialsKey
		deps := executord.Deps{Bus: rt.bus, Log: rt.log, Health: rt.health, Registry: rt.reg}
		if cfg.PullMode() {
			var rc *rest.Config
			var err error
			if cfg.Kubeconfig != "" {
				raw, rerr := os.ReadFile(cfg.Kubeconfig)
				if rerr != nil {
					return nil, fmt.Errorf("--kubeconfig: %w", rerr)
				}
				rc, err = member.FromKubeconfig(raw, cfg.KubeAPIQPS, cfg.KubeAPIBurst)
			} else {
				rc, err = rest.InClusterConfig()
			}
			if err != nil {
				return nil, err
			}
			deps.PullConfig = rc
		}
		d, err := executord.New(cfg, deps)
		if err != nil {
			return nil, err
		}
		return d.Run, nil
	}
	return nil, fmt.Errorf("unknown daemon %s", name)
}

func newUp(g *globals) *cobra.Command {
	f := &daemonFlags{}
	var dataDir, listen string
	c := &cobra.Command{
		Use:   "up",
		Short: "Run everything in one process: embedded NATS JetStream and all four daemons",
		Long: `Run an embedded nats-server (JetStream file storage under --data-dir) and
policyd, schedulerd, healthd and executord in one process. Client commands
then work with no flags: flotilla join|apply|get|delete.

With --nats-url set explicitly, up uses that NATS instead of an embedded one.`,
		Example: "  flotilla up --data-dir ./.flotilla &\n  flotilla join cluster1 --cluster-kubeconfig .sandbox/cluster1.kubeconfig",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			log, err := g.logger()
			if err != nil {
				return err
			}
			defer log.Sync()
			if err := os.MkdirAll(dataDir, 0o700); err != nil {
				return fmt.Errorf("--data-dir: %w", err)
			}
			if !cmd.Flags().Changed("nats-url") {
				srv, err := natsbus.StartEmbedded(listen, filepath.Join(dataDir, "jetstream"))
				if err != nil {
					return err
				}
				defer srv.Shutdown()
				g.natsURL = srv.URL()
			}
			if f.credentialsKey == "" {
				f.credentialsKey = filepath.Join(dataDir, "credentials.key")
			}
			rt, err := newRuntime(cmd.Context(), g, log, f.metricsAddr)
			if err != nil {
				return err
			}
			defer rt.bus.Close()
			if err := rt.bus.EnsureStreams(cmd.Context()); err != nil {
				return err
			}
			var runs []func(context.Context) error
			for _, name := range []string{"policyd", "schedulerd", "healthd", "executord"} {
				run, err := buildDaemon(name, f, rt)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				runs = append(runs, run)
			}
			log.Info("flotilla up", zap.String("nats_url", g.natsURL), zap.String("data_dir", dataDir), zap.Duration("started_in", time.Since(start)))
			fmt.Fprintf(os.Stderr, "flotilla up: ready in %s, NATS %s, data in %s\n", time.Since(start).Round(time.Millisecond), g.natsURL, dataDir)
			return rt.serve(cmd.Context(), runs...)
		},
	}
	c.Flags().StringVar(&dataDir, "data-dir", "./.flotilla", "where JetStream and the credentials key live")
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:4222", "address of the embedded NATS server")
	f.register(c, "up", defaultMetricsAddr["up"])
	return c
}
