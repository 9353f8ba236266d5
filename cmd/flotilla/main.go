// Command flotilla is Flotilla's one binary: the four daemons, `up` (all of
// them with an embedded NATS), and the client verbs users drive it with.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/cmd/flotilla/bench"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// globals are the flags every command shares.
type globals struct {
	natsURL   string
	creds     string
	tlsCA     string
	logLevel  string
	logFormat string
	// verb is the command running ("get work"), which refusals name.
	verb string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot()
	if err := root.ExecuteContext(ctx); err != nil {
		var exit exitError
		if !errors.As(err, &exit) {
			fmt.Fprintln(os.Stderr, "error:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitCode is the process's exit status for err: 1 unless err says
// otherwise (apply's 3 for "stored, not confirmed").
func exitCode(err error) int {
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return 1
}

// exitError is an error already reported to the user.
type exitError struct{ error }

func newRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "flotilla",
		Short: "Flotilla: Karmada's policy language, scheduled by event-driven daemons on NATS JetStream",
		Long: `Flotilla places Kubernetes workloads on member clusters with Karmada's
PropagationPolicy / OverridePolicy / Cluster objects, but without a central API
server: policyd, schedulerd, healthd and executord talk only through NATS
JetStream, every message a CloudEvent.

Start everything locally:   flotilla up --data-dir ./.flotilla
Register a member cluster:  flotilla join cluster1 --cluster-kubeconfig cluster1.kubeconfig
Propagate workloads:        flotilla apply -f examples/seed000/my-app.yaml \
                              -f examples/seed000/propagation-policy.yaml \
                              -f examples/seed000/override-policy.yaml
See where they run:         flotilla get work`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Reads warn on the command's standard error (tests capture it).
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			warnings = cmd.ErrOrStderr()
			g.verb = strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
			emptyNamespaceIsDefault(cmd)
			return checkTimeout(cmd)
		},
	}
	defURL := os.Getenv("FLOTILLA_NATS_URL")
	if defURL == "" {
		defURL = natsbus.DefaultURL
	}
	root.PersistentFlags().StringVar(&g.natsURL, "nats-url", defURL, "NATS server URL, or the comma-separated URLs of a cluster's nodes (env FLOTILLA_NATS_URL)")
	root.PersistentFlags().StringVar(&g.creds, "creds", os.Getenv(credentialsEnv), "NATS credentials file (env "+credentialsEnv+"; default: the credentials flotilla up registered for --nats-url)")
	root.PersistentFlags().StringVar(&g.tlsCA, "tls-ca", os.Getenv(tlsCAEnv), "CA (PEM) the NATS server's TLS certificate is signed by (env "+tlsCAEnv+"; default: the CA flotilla up --tls registered for --nats-url)")
	var version bool
	root.Flags().BoolVar(&version, "version", false, "print the versions of the CLI, the daemons seen on the bus and the NATS server")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if version {
			return printVersion(cmd, g, false)
		}
		return cmd.Help()
	}
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "", "log format: json or console (default: console on a terminal, json otherwise)")
	root.AddGroup(&cobra.Group{ID: "daemons", Title: "Daemons:"}, &cobra.Group{ID: "client", Title: "Client commands:"})
	for _, c := range []*cobra.Command{newUp(g), newDaemonCmd(g, "policyd"), newDaemonCmd(g, "schedulerd"), newDaemonCmd(g, "healthd"), newDaemonCmd(g, "executord"), newDaemonCmd(g, "hubd")} {
		c.GroupID = "daemons"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{newJoin(g), newUnjoin(g), newApply(g), newDiff(g), newDelete(g), newGet(g), newDescribe(g), newExplain(g), newScale(g),
		newReschedule(g), newWatch(g), newReplay(g), newConsole(g), newPublish(g), newCreds(g), newSimulate(g), newVersion(g), newHub(),
		bench.NewCommand(cpuProfileEnv, func(cmd *cobra.Command) bench.NATS {
			if !cmd.Flags().Changed("nats-url") {
				return bench.NATS{} // the bench's own embedded server
			}
			return bench.NATS{URL: g.natsURL, Credentials: g.credentials(), TLSCA: g.serverCA()}
		}, func(err error) error { return exitError{err} }),
	} {
		c.GroupID = "client"
		root.AddCommand(c)
	}
	root.AddCommand(newNATSNode(), newNATSWait(g), newNATSAuthority(), newNATSTLS(), newNATSRegister(g))
	return root
}

func (g *globals) logger() (*zap.Logger, error) { return observe.NewLogger(g.logLevel, g.logFormat) }

// connect opens a client connection to the bus.
func (g *globals) connect(ctx context.Context) (*natsbus.Bus, error) {
	return natsbus.Connect(ctx, g.natsURL, natsbus.Options{Name: "flotilla-cli", Credentials: g.credentials(), TLSCA: g.serverCA()})
}

// withBus runs fn with a client connection to the bus, closed when fn
// returns: the scaffolding of every client verb that reads or publishes.
// A verb the credential may not do ends at once with the refusal.
func (g *globals) withBus(ctx context.Context, fn func(bus *natsbus.Bus) error) error {
	bus, err := g.connect(ctx)
	if err != nil {
		return err
	}
	defer bus.Close()
	return refusedDuring(g.verb, bus, func() error { return fn(bus) })
}

// checkTimeout refuses a --timeout that is not positive, for every command
// that has one: waiting 0 or -5s would give up before anything could answer.
func checkTimeout(cmd *cobra.Command) error {
	if d, err := cmd.Flags().GetDuration("timeout"); err == nil && d <= 0 {
		return fmt.Errorf("invalid argument %q for --timeout: must be more than 0 (for example 30s or 2m)", d)
	}
	return nil
}

// emptyNamespaceIsDefault reads -n "" as kubectl does: the default
// namespace (for the -n flags whose default is "default"; creds issue's
// --namespace "" means no namespace and stays so).
func emptyNamespaceIsDefault(cmd *cobra.Command) {
	if f := cmd.Flags().Lookup("namespace"); f != nil && f.Shorthand == "n" && f.DefValue == "default" && f.Value.String() == "" {
		_ = f.Value.Set("default")
	}
}
