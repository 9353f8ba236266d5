package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/readmodel"
)

// cliVersion is this binary's version: the module version and VCS revision
// Go recorded at build time.
func cliVersion() string {
	v, rev, dirty := "(devel)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += ", commit " + rev
		if dirty {
			v += "+dirty"
		}
	}
	return v + ", " + goruntime.Version()
}

func newVersion(g *globals) *cobra.Command {
	var client bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the CLI's version, the daemons seen on the bus and the NATS server's version",
		Long: `Print this CLI's version, then, unless --client, the NATS server's version and
every daemon seen on the bus: each durable consumer a daemon bound, whether
it is pulling now and when it last got a message. flotilla --version is the same.`,
		Example: "  flotilla version\n  flotilla version --client",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd, g, client)
		},
	}
	c.Flags().BoolVar(&client, "client", false, "the CLI's version alone")
	return c
}

func printVersion(cmd *cobra.Command, g *globals, client bool) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Client Version: %s\n", cliVersion())
	if client {
		return nil
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return g.withBus(ctx, func(bus *natsbus.Bus) error {
		nc := bus.JetStream().Conn()
		fmt.Fprintf(out, "NATS Server:    %s at %s\n", nc.ConnectedServerVersion(), nc.ConnectedUrlRedacted())
		fmt.Fprintln(out, "Daemons seen on the bus:")
		w := table(out)
		fmt.Fprintln(w, "  DAEMON\tCONSUMER\tSTREAM\tPULLING\tLAST DELIVERY")
		for _, s := range events.Streams {
			stream, err := bus.JetStream().Stream(ctx, s.Name)
			if err != nil {
				continue
			}
			for name := range stream.ConsumerNames(ctx).Name() {
				daemon, _, _ := strings.Cut(name, "-")
				if !slices.Contains([]string{"policyd", "schedulerd", "healthd", "executord"}, daemon) {
					continue // a client's reader, not a daemon
				}
				c, err := stream.Consumer(ctx, name)
				if err != nil {
					continue
				}
				info, err := c.Info(ctx)
				if err != nil {
					continue
				}
				last := "never"
				if info.Delivered.Last != nil {
					last = age(*info.Delivered.Last) + " ago"
				}
				pulling := "no"
				if info.NumWaiting > 0 {
					pulling = "yes"
				}
				fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", daemon, name, s.Name, pulling, last)
			}
		}
		return w.Flush()
	})
}

// confirmed asks on errw and reads a yes from in.
func confirmed(in io.Reader, errw io.Writer) bool {
	fmt.Fprint(errw, "Continue? [y/N] ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

func newScale(g *globals) *cobra.Command {
	var namespace string
	var replicas int32
	var timeout time.Duration
	c := &cobra.Command{
		Use:               "scale TYPE/NAME... --replicas N",
		Short:             "Set a workload template's replicas (kubectl scale): the template is applied again with spec.replicas N",
		Example:           "  flotilla scale deployment/my-app --replicas 9\n  flotilla scale deploy my-app --replicas 3",
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeResources(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case !cmd.Flags().Changed("replicas"):
				return errors.New("--replicas N (0 or more) is required")
			case replicas < 0:
				return fmt.Errorf("--replicas %d: must be 0 or more", replicas)
			}
			ctx := cmd.Context()
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				p, err := readPublished(ctx, bus)
				if err != nil {
					return err
				}
				targets, err := readmodel.ParseArgs(args, readmodel.Known(p), false)
				if err != nil {
					return err
				}
				var msgs []outgoing
				for _, t := range targets {
					if len(t.Names) == 0 {
						return fmt.Errorf("%s: resource(s) were provided, but no name was given", t.Resource.Word)
					}
					rs, err := readmodel.ResolveRecords(p, t, namespace, false)
					if err != nil {
						return err
					}
					for _, r := range rs {
						if w := readmodel.UnclaimedChange(p, r.Key); w != "" {
							fmt.Fprintln(cmd.ErrOrStderr(), "Warning:", w)
						}
						obj := readmodel.AppliedObject(r)
						spec, _ := obj["spec"].(map[string]any)
						if _, ok := spec["replicas"]; !ok {
							return fmt.Errorf("%s has no spec.replicas to scale", r.Key.Ref())
						}
						spec["replicas"] = int64(replicas)
						readmodel.StripServerFields(obj)
						e, err := events.New(events.TypeObjectApplied, cliSource, r.Key.String(), obj)
						if err != nil {
							return err
						}
						msgs = append(msgs, outgoing{events.InputSubject(r.Key), e, r.Key, label(r.Key.Kind, r.APIVersion, r.Key.Name), "scaled"})
					}
				}
				return publishAndConfirm(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), bus, msgs, timeout)
			})
		},
	}
	c.Flags().StringVarP(&namespace, "namespace", "n", "default", "namespace")
	c.Flags().Int32Var(&replicas, "replicas", 0, "the new number of replicas")
	c.Flags().DurationVar(&timeout, "timeout", defaultConfirmTimeout, "how long to wait for policyd to confirm (exit status 3 after it)")
	return c
}

// completeNames completes the names of one resource type from the bus.
func completeNames(g *globals, word string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	complete := completeResources(g)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return complete(cmd, append([]string{word}, args...), toComplete)
	}
}
