package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// newNATSNode is `flotilla nats-node`: one node of the local JetStream
// cluster that deploy/nats/nats.sh (make nats-cluster) starts as its own
// process. Hidden: users run the make targets.
func newNATSNode() *cobra.Command {
	var n natsbus.ClusterNode
	c := &cobra.Command{
		Use:    "nats-node",
		Short:  "Run one nats-server node of a JetStream cluster (make nats-cluster)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n.Name == "" || n.Port == 0 || n.RoutePort == 0 || n.DataDir == "" {
				return fmt.Errorf("--name, --port, --route-port and --data-dir are required")
			}
			if err := os.MkdirAll(n.DataDir, 0o700); err != nil {
				return fmt.Errorf("--data-dir: %w", err)
			}
			return natsbus.RunNode(cmd.Context(), n)
		},
	}
	fs := c.Flags()
	fs.StringVar(&n.Name, "name", "", "server_name of the node (n1)")
	fs.StringVar(&n.Cluster, "cluster", "flotilla", "cluster name, the same on every node")
	fs.StringVar(&n.Host, "host", "127.0.0.1", "listen address of clients, routes and monitoring")
	fs.IntVar(&n.Port, "port", 0, "client port")
	fs.IntVar(&n.RoutePort, "route-port", 0, "route port the other nodes connect to")
	fs.StringSliceVar(&n.Routes, "routes", nil, "route URLs of the cluster's nodes (nats-route://127.0.0.1:14231,...)")
	fs.IntVar(&n.MonitorPort, "monitor-port", 0, "port of /varz and /jsz (0: off)")
	fs.StringVar(&n.DataDir, "data-dir", "", "JetStream file storage of this node")
	fs.BoolVar(&n.SyncAlways, "sync-always", false, "fsync every JetStream write before acknowledging it (sync_interval: always)")
	return c
}

// newNATSWait is `flotilla nats-wait`: it returns once the JetStream at
// --nats-url has a meta leader (make nats-cluster waits with it).
func newNATSWait(g *globals) *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:    "nats-wait",
		Short:  "Wait until the JetStream cluster at --nats-url has a meta leader",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return natsbus.WaitMetaLeader(ctx, g.natsURL)
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait")
	return c
}
