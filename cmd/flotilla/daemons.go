package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/executord"
	"github.com/flotilla-io/flotilla/healthd"
	"github.com/flotilla-io/flotilla/hubd"
	"github.com/flotilla-io/flotilla/internal/member"
	"github.com/flotilla-io/flotilla/internal/observe"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/schedulerd"
)

// daemonFlags are the settings of the daemons one process runs: the
// process's own (instance, metrics address, credentials key) and each
// daemon's Config, whose flags the daemon registers itself.
type daemonFlags struct {
	instance       string
	metricsAddr    string
	credentialsKey string
	streamReplicas int
	partitions     int
	lease          time.Duration
	policy         policyd.Config
	sched          schedulerd.Config
	health         healthd.Config
	exec           executord.Config
	hub            hubd.Config
}

func newDaemonFlags() *daemonFlags {
	return &daemonFlags{policy: policyd.DefaultConfig(), sched: schedulerd.DefaultConfig(), health: healthd.DefaultConfig(), exec: executord.DefaultConfig(),
		hub: hubd.DefaultConfig()}
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

// registerProcess registers the flags of the process, which every daemon
// it runs shares; credentials: one of them opens sealed kubeconfigs.
func (f *daemonFlags) registerProcess(fs *pflag.FlagSet, defaultMetrics string, credentials bool) {
	fs.StringVar(&f.instance, "instance", defaultInstance(), "instance name, unique among the running instances of each daemon; used in event sources (/<daemon>/<instance>) and consumer names")
	fs.IntVar(&f.partitions, "partitions", 0, fmt.Sprintf("partitions templates are shared out by among instances, fixed at the system's first start (default: the fixed count, or %d)", natsbus.DefaultPartitions))
	fs.DurationVar(&f.lease, "lease", 0, fmt.Sprintf("how long a dead instance's partitions wait for another owner; used only when this start creates the lease buckets (default %s)", natsbus.DefaultLease))
	fs.StringVar(&f.metricsAddr, "metrics-addr", defaultMetrics, "address of /metrics, /healthz and /readyz (empty: off)")
	fs.IntVar(&f.streamReplicas, "stream-replicas", 0, "copies of each stream kept by the NATS cluster; an existing stream with fewer is scaled up (default: 3 when the cluster has three or more nodes, else 1)")
	if credentials {
		fs.StringVar(&f.credentialsKey, "credentials-key", "", "credentials key file (created if missing); kubeconfigs on the bus are sealed to it (default: <data-dir>/credentials.key under up, else "+defaultCredentialsKey()+")")
	}
}

// daemon is what the command of one daemon needs to know about it.
type daemon struct {
	short       string
	metricsAddr string
	// credentials: it opens sealed kubeconfigs (--credentials-key).
	credentials bool
	// register registers the daemon's own flags for its command.
	register func(*daemonFlags, *pflag.FlagSet)
}

var daemons = map[string]daemon{
	"policyd": {short: "Validate applied objects, match templates to policies, publish bindings", metricsAddr: "127.0.0.1:9101",
		register: func(f *daemonFlags, fs *pflag.FlagSet) { f.policy.RegisterFlags(fs) }},
	"schedulerd": {short: "Place bindings on member clusters and explain every decision", metricsAddr: "127.0.0.1:9102",
		register: func(f *daemonFlags, fs *pflag.FlagSet) { f.sched.RegisterFlags(fs) }},
	"executord": {short: "Apply placed objects to member clusters and report their status", metricsAddr: "127.0.0.1:9103", credentials: true,
		register: func(f *daemonFlags, fs *pflag.FlagSet) { f.exec.RegisterFlags(fs); f.exec.RegisterPullFlags(fs) }},
	"healthd": {short: "Probe member clusters and report health and capacity", metricsAddr: "127.0.0.1:9104", credentials: true,
		register: func(f *daemonFlags, fs *pflag.FlagSet) { f.health.RegisterFlags(fs) }},
	"hubd": {short: "Mirror a hub kube-apiserver onto the bus and write statuses, bindings and Clusters back (docs/hub.md)", metricsAddr: "127.0.0.1:9105",
		register: func(f *daemonFlags, fs *pflag.FlagSet) { f.hub.RegisterFlags(fs) }},
}

// registerAll registers every daemon's flags for `flotilla up`, which runs
// them all in one process (executord in push mode: no pull flags).
func (f *daemonFlags) registerAll(fs *pflag.FlagSet) {
	f.registerProcess(fs, "127.0.0.1:9100", true)
	f.policy.RegisterFlags(fs)
	f.sched.RegisterFlags(fs)
	f.health.RegisterFlags(fs)
	f.exec.RegisterFlags(fs)
	f.hub.RegisterFlags(fs)
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

func newDaemonCmd(g *globals, name string) *cobra.Command {
	f, dm := newDaemonFlags(), daemons[name]
	c := &cobra.Command{
		Use:   name,
		Short: dm.short,
		Long: dm.short + `, as its own process against the NATS at --nats-url.
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
			rt, err := newRuntime(cmd.Context(), g, log, f)
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
	f.registerProcess(c.Flags(), dm.metricsAddr, dm.credentials)
	dm.register(f, c.Flags())
	return c
}

// runtime is what every daemon process shares: bus, logger, metrics, health.
type runtime struct {
	bus         *natsbus.Bus
	log         *zap.Logger
	reg         *prometheus.Registry
	metrics     *natsbus.Metrics
	health      *observe.Health
	metricsAddr string
	// metricsLn: metricsAddr opened already (up), served instead.
	metricsLn net.Listener
	tlsCA     string // the CA every connection of the process trusts
	// buses are every connection the process runs on (up gives each
	// daemon its own): serve ends on the first refusal any of them meets.
	buses []*natsbus.Bus
}

func newRuntime(ctx context.Context, g *globals, log *zap.Logger, f *daemonFlags) (*runtime, error) {
	events.Warm() // compile the event codec before the first event, not on it
	reg := observe.NewRegistry()
	metrics := natsbus.NewMetrics(reg)
	reader := ""
	if f.exec.PullMode() {
		// A member's executord reads through one consumer of its own: all
		// a credential issued with --cluster may read through.
		reader = executord.ReaderFor(f.exec.Cluster)
	}
	bus, err := natsbus.Connect(ctx, g.natsURL, natsbus.Options{Name: "flotilla", Log: log, Metrics: metrics, Credentials: g.credentials(), TLSCA: g.serverCA(),
		StreamReplicas: f.streamReplicas, Reader: reader})
	if err != nil {
		return nil, err
	}
	log.Info("stream replicas", zap.Int("replicas", bus.StreamReplicas()), zap.Bool("from_cluster_size", f.streamReplicas <= 0))
	h := observe.NewHealth()
	h.Add("nats", func() error {
		if !bus.Connected() {
			return fmt.Errorf("not connected")
		}
		return nil
	})
	return &runtime{bus: bus, log: log, reg: reg, metrics: metrics, health: h, metricsAddr: f.metricsAddr, tlsCA: g.serverCA(), buses: []*natsbus.Bus{bus}}, nil
}

// on is rt with bus as the connection its daemon runs on; rt watches it.
func (rt *runtime) on(bus *natsbus.Bus, name string) *runtime {
	rt.buses = append(rt.buses, bus)
	rt.health.Add("nats "+name, func() error {
		if !bus.Connected() {
			return fmt.Errorf("not connected")
		}
		return nil
	})
	out := *rt
	out.bus = bus
	return &out
}

// serve runs the daemons and the HTTP endpoints until ctx is done or one fails.
func (rt *runtime) serve(ctx context.Context, runs ...func(context.Context) error) error {
	grp, ctx := errgroup.WithContext(ctx)
	if rt.metricsLn != nil {
		grp.Go(func() error { return observe.ServeOn(ctx, rt.metricsLn, rt.reg, rt.health, rt.log) })
	} else {
		grp.Go(func() error { return observe.Serve(ctx, rt.metricsAddr, rt.reg, rt.health, rt.log) })
	}
	for _, bus := range rt.buses {
		// A daemon refused what it needs is misconfigured: fail loudly.
		grp.Go(func() error {
			select {
			case err := <-bus.Refused():
				return err
			case <-ctx.Done():
				return nil
			}
		})
	}
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
		cfg := f.policy
		cfg.Instance, cfg.Version, cfg.Partitions, cfg.Lease = f.instance, cliVersion(), f.partitions, f.lease
		d, err := policyd.New(cfg, policyd.Deps{Bus: rt.bus, Log: rt.log, Health: rt.health, Registry: rt.reg})
		if err != nil {
			return nil, err
		}
		return d.Run, nil
	case "schedulerd":
		cfg := f.sched
		cfg.Instance, cfg.Version, cfg.Partitions, cfg.Lease = f.instance, cliVersion(), f.partitions, f.lease
		d, err := schedulerd.New(cfg, schedulerd.Deps{Bus: rt.bus, Log: rt.log, Health: rt.health, Registry: rt.reg})
		if err != nil {
			return nil, err
		}
		return d.Run, nil
	case "healthd":
		cfg := f.health
		cfg.Instance, cfg.CredentialsKey = f.instance, f.credentialsKey
		cfg.Version, cfg.Partitions, cfg.Lease = cliVersion(), f.partitions, f.lease
		d, err := healthd.New(cfg, healthd.Deps{Bus: rt.bus, Log: rt.log, Health: rt.health, Registry: rt.reg})
		if err != nil {
			return nil, err
		}
		return d.Run, nil // joins the instances itself
	case "executord":
		cfg := f.exec
		cfg.Instance, cfg.CredentialsKey = f.instance, f.credentialsKey
		cfg.Version, cfg.Partitions, cfg.Lease = cliVersion(), f.partitions, f.lease
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
		return d.Run, nil // push mode joins the instances itself; pull mode's member credential reaches no registry
	case "hubd":
		// Not in the instance registry: hubd is the CLI's apply driven by a
		// watch, and its role reaches no registry bucket.
		cfg := f.hub
		cfg.Instance = f.instance
		d, err := hubd.New(cfg, hubd.Deps{Bus: rt.bus, Log: rt.log, Registry: rt.reg})
		if err != nil {
			return nil, err
		}
		return d.Run, nil
	}
	return nil, fmt.Errorf("unknown daemon %s", name)
}

// embedded reports whether up starts its own nats-server: unless
// --nats-url is on its command line. FLOTILLA_NATS_URL, the flag's
// default, only says where client commands connect.
func embedded(up *cobra.Command) bool { return !up.Flags().Changed("nats-url") }

func newUp(g *globals) *cobra.Command {
	f := newDaemonFlags()
	var dataDir, listen, authDir, consoleListen string
	var insecure bool
	var tlsf upTLS
	c := &cobra.Command{
		Use:   "up",
		Short: "Run everything in one process: embedded NATS JetStream and all four daemons",
		Long: `Run an embedded nats-server (JetStream file storage under --data-dir) and
policyd, schedulerd, healthd and executord in one process. Client commands
then work with no flags: flotilla join|apply|get|delete. With
--hub-kubeconfig, hubd runs too: kubectl, Helm or Argo CD then drive
Flotilla through that hub (docs/hub.md).

Authentication is on: the first start generates an operator, an account and
their keys under <data-dir>/auth, writes admin credentials to
<data-dir>/creds/admin.creds and registers them for the client URL under
$XDG_CONFIG_HOME/flotilla/credentials, where every command finds them.
Each daemon connects with its own role's credentials. --insecure turns
authentication off. --tls serves NATS over TLS with a CA generated under
<data-dir>/tls and registered beside the admin credentials (<host>_<port>.ca),
which every command and up's own daemons trust. docs/security.md has the
whole model.

The web console (docs/console.md) is served on --console-listen, with the
console role's credentials; when that address is taken, up warns and runs
without it, so several up can run side by side (the same for --metrics-addr).

With --nats-url set explicitly, up uses that NATS instead of an embedded one.
If that NATS trusts an authority (make nats-cluster makes one under
.sandbox/nats/auth), give up its directory with --auth-dir: up then serves
creds issue and revoke, runs each daemon on its own role's credentials and
registers the admin credentials beside it for every URL of --nats-url.`,
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
			embedded := embedded(cmd)
			held := ""
			if embedded {
				held = listen
			}
			lock, err := holdUp(dataDir, held)
			if err != nil {
				return err
			}
			defer lock.release()
			var auth *upAuth
			if !insecure {
				dir := authDir
				if dir == "" {
					dir = filepath.Join(dataDir, "auth")
				}
				if auth, err = loadUpAuth(dir, embedded, authDir != ""); err != nil {
					return err
				}
			}
			serveTLS, err := tlsf.serve(g, dataDir, listen, embedded)
			if err != nil {
				return err
			}
			if embedded {
				var authority *natsbus.Authority
				if auth != nil {
					authority = auth.authority
				}
				srv, err := natsbus.StartEmbedded(listen, filepath.Join(dataDir, "jetstream"), authority, serveTLS...)
				if err != nil {
					return err
				}
				defer srv.Shutdown()
				g.natsURL = srv.URL()
				registerServerCA(g.natsURL, g.tlsCA, tlsf.on, log, cmd.ErrOrStderr())
			}
			if auth != nil {
				if g.creds, err = auth.mint(roleAdmin); err != nil {
					return err
				}
			}
			switch {
			case insecure && embedded:
				warnInsecure(g.natsURL, log, cmd.ErrOrStderr())
			case auth == nil && !embedded && !insecure:
				log.Info("no authority under --data-dir or --auth-dir: creds issue and revoke are not served here, the daemons connect with --creds or the credentials registered for --nats-url")
			}
			if f.credentialsKey == "" {
				f.credentialsKey = filepath.Join(dataDir, "credentials.key")
			}
			rt, err := newRuntime(cmd.Context(), g, log, f)
			if err != nil {
				return err
			}
			defer rt.bus.Close()
			if err := rt.bus.EnsureStreams(cmd.Context()); err != nil {
				return err
			}
			var runs []func(context.Context) error
			if auth != nil {
				svc, err := auth.serveCredentials(cmd.Context(), rt.bus, g.natsURL, log, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				runs = append(runs, svc.Run)
			}
			started := []string{"policyd", "schedulerd", "healthd", "executord"}
			if f.hub.HubKubeconfig != "" {
				started = append(started, "hubd")
			}
			for _, name := range started {
				drt := rt
				if auth != nil {
					bus, err := auth.connectAs(cmd.Context(), name, g.natsURL, rt)
					if err != nil {
						return fmt.Errorf("%s: %w", name, err)
					}
					defer bus.Close()
					drt = rt.on(bus, name)
				}
				run, err := buildDaemon(name, f, drt)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				runs = append(runs, run)
			}
			upMetrics(rt, cmd.ErrOrStderr())
			if consoleListen != consoleOff {
				run, err := upConsole(cmd.Context(), auth, g.natsURL, rt, consoleListen, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				if run != nil {
					runs = append(runs, run)
				}
			}
			log.Info("flotilla up", zap.String("nats_url", g.natsURL), zap.String("data_dir", dataDir), zap.Duration("started_in", time.Since(start)))
			fmt.Fprintf(os.Stderr, "flotilla up: ready in %s, NATS %s, data in %s\n", time.Since(start).Round(time.Millisecond), g.natsURL, dataDir)
			return rt.serve(cmd.Context(), runs...)
		},
	}
	c.Flags().StringVar(&dataDir, "data-dir", "./.flotilla", "where JetStream and the credentials key live")
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:4222", "address of the embedded NATS server")
	c.Flags().StringVar(&consoleListen, "console-listen", "127.0.0.1:8080", "address of the web console (off: none); a busy address is a warning, not a failure")
	c.Flags().BoolVar(&insecure, "insecure", false, "run the embedded NATS without authentication: anyone who reaches it can do anything")
	c.Flags().StringVar(&authDir, "auth-dir", "", "the authority's keys (default <data-dir>/auth; with --nats-url, the directory the servers' authority is in, e.g. .sandbox/nats/auth); credentials are written to creds/ beside it")
	tlsf.register(c.Flags())
	f.registerAll(c.Flags())
	return c
}

// defaultInstance names an instance after its host and process, so that
// instances started with no --instance never collide.
func defaultInstance() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "flotilla"
	}
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, strings.SplitN(host, ".", 2)[0])
	name := fmt.Sprintf("%s-%d", host, os.Getpid())
	return strings.TrimLeft(name[max(0, len(name)-63):], "-_")
}

// upMetrics opens the address of up's /metrics, /healthz and /readyz
// before up says it is ready. Taken, it is a warning and no endpoints,
// as the console's address is: several up run side by side, and the
// second found 127.0.0.1:9100 taken and stopped after saying ready.
func upMetrics(rt *runtime, errw io.Writer) {
	if rt.metricsAddr == "" {
		return
	}
	ln, err := observe.Listen(rt.metricsAddr)
	if err != nil {
		rt.log.Warn("no metrics endpoint", zap.Error(err))
		fmt.Fprintf(errw, "flotilla up: WARNING: %v; running without /metrics, /healthz and /readyz (--metrics-addr ADDR, or '' for off)\n", err)
		rt.metricsAddr = ""
		return
	}
	rt.metricsLn = ln
}
