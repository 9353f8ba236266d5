package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// newNATSNode is `flotilla nats-node`: one node of the local JetStream
// cluster that deploy/nats/nats.sh (make nats-cluster) starts as its own
// process. Hidden: users run the make targets.
func newNATSNode() *cobra.Command {
	var n natsbus.ClusterNode
	var authDir, tlsDir string
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
			var err error
			if n.Auth, err = clusterAuthority(authDir); err != nil {
				return err
			}
			if tlsDir != "" {
				f, err := clusterTLS(tlsDir)
				if err != nil {
					return err
				}
				n.TLS = &f
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
	fs.StringVar(&authDir, "auth-dir", "", "trust the authority in this directory (made by nats-authority; the same on every node); empty: authentication off")
	fs.StringVar(&tlsDir, "tls-dir", "", "serve clients and routes over TLS only with the certificate and CA in this directory (made by nats-tls; the same on every node); empty: plain")
	return c
}

// clusterTLS loads the certificate, key and CA nats-tls made in dir; a
// node never makes them, since three nodes making their own would not
// trust one another.
func clusterTLS(dir string) (natsbus.TLSFiles, error) {
	f := natsbus.TLSFiles{Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server-key.pem"), CA: filepath.Join(dir, "ca.pem")}
	for _, p := range []string{f.Cert, f.Key, f.CA} {
		if _, err := os.Stat(p); err != nil {
			return f, fmt.Errorf("--tls-dir: %w (nats-tls makes it)", err)
		}
	}
	return f, nil
}

// newNATSTLS is `flotilla nats-tls`: it generates, once, the CA and the
// certificate every node of a cluster serves clients and routes with,
// before make nats-cluster TLS=1 starts them (natsbus.LoadOrCreateTLS, as
// up --tls does under its data dir).
func newNATSTLS() *cobra.Command {
	var tlsDir string
	c := &cobra.Command{
		Use:    "nats-tls",
		Short:  "Create the TLS CA and certificate of a NATS cluster unless they exist",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if tlsDir == "" {
				return fmt.Errorf("--tls-dir is required")
			}
			_, err := natsbus.LoadOrCreateTLS(tlsDir, nil)
			return err
		},
	}
	c.Flags().StringVar(&tlsDir, "tls-dir", "", "directory of the CA (ca.pem) and the nodes' certificate and key (created, mode 0700)")
	return c
}

// clusterAuthority loads the authority of a cluster's --auth-dir, or
// none when dir is "" (a cluster run without authentication).
func clusterAuthority(dir string) (*natsbus.Authority, error) {
	if dir == "" {
		return nil, nil
	}
	a, err := natsbus.LoadAuthority(dir)
	if err != nil {
		return nil, fmt.Errorf("--auth-dir: %w", err)
	}
	return a, nil
}

// newNATSWait is `flotilla nats-wait`: it returns once the JetStream at
// --nats-url has a meta leader (make nats-cluster waits with it).
func newNATSWait(g *globals) *cobra.Command {
	var timeout time.Duration
	var authDir string
	c := &cobra.Command{
		Use:    "nats-wait",
		Short:  "Wait until the JetStream cluster at --nats-url has a meta leader",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			auth, err := clusterAuthority(authDir)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return natsbus.WaitMetaLeader(ctx, g.natsURL, auth, g.tlsCA)
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait")
	c.Flags().StringVar(&authDir, "auth-dir", "", "connect as an admin of the authority in this directory (a cluster with authentication)")
	return c
}

// newNATSAuthority is `flotilla nats-authority`: it creates the authority
// a cluster's nodes share, once, before make nats-cluster starts them
// (each node only loads it: three making their own would not agree).
func newNATSAuthority() *cobra.Command {
	var authDir string
	c := &cobra.Command{
		Use:    "nats-authority",
		Short:  "Create the authority (operator and account keys) of a NATS cluster unless it exists",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if authDir == "" {
				return fmt.Errorf("--auth-dir is required")
			}
			_, err := natsbus.LoadOrCreateAuthority(authDir)
			return err
		},
	}
	c.Flags().StringVar(&authDir, "auth-dir", "", "directory of the authority's seeds (created, mode 0700)")
	return c
}

// newNATSRegister is `flotilla nats-register`: once a cluster with
// authentication serves JetStream, it makes sure its admin credentials
// exist (creds/admin.creds beside --auth-dir, issued through the
// credentials service like up's and recorded as "admin") and registers
// them for every URL of --nats-url, as up does for its own URL. With
// --insecure it forgets any registered for them instead. It registers the
// CA of --tls-ca for them too (a cluster serving TLS), or forgets one
// registered there (a plain cluster), as up --tls does.
func newNATSRegister(g *globals) *cobra.Command {
	var authDir string
	var insecure bool
	c := &cobra.Command{
		Use:    "nats-register",
		Short:  "Write and register the admin credentials of a NATS cluster for its URLs",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cas, err := registerCA(g.natsURL, g.tlsCA)
			if err != nil {
				return fmt.Errorf("register the TLS CA: %w", err)
			}
			if len(cas) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "TLS CA %s, registered as %s\n", g.tlsCA, strings.Join(cas, ", "))
			}
			if insecure {
				unregister(g.natsURL)
				return nil
			}
			auth, err := loadUpAuth(authDir, false, true)
			if err != nil {
				return err
			}
			file := filepath.Join(auth.credsDir, "admin.creds")
			if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
				ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
				defer cancel()
				if err := issueClusterAdmin(ctx, auth, g.natsURL, g.tlsCA, file); err != nil {
					return err
				}
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			where, err := register(g.natsURL, credsExt, raw)
			if err != nil {
				return fmt.Errorf("register the admin credentials: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "admin credentials %s, registered as %s\n", file, strings.Join(where, ", "))
			return nil
		},
	}
	c.Flags().StringVar(&authDir, "auth-dir", "", "the cluster's authority (its credentials go to creds/ beside it)")
	c.Flags().BoolVar(&insecure, "insecure", false, "the cluster runs without authentication: forget the credentials registered for its URLs")
	return c
}

// issueClusterAdmin issues the cluster's first admin credentials into file
// through a credentials service run for the moment on an admin
// connection the authority signs in memory, over TLS verified with the CA
// in tlsCA ("": plain).
func issueClusterAdmin(ctx context.Context, auth *upAuth, urls, tlsCA, file string) error {
	bus, err := auth.authority.ConnectAdmin(ctx, urls, natsbus.Options{Name: "flotilla-nats-register", TLSCA: tlsCA})
	if err != nil {
		return err
	}
	defer bus.Close()
	svc, err := natsbus.NewCredentialService(ctx, bus, auth.authority, roleGrant)
	if err != nil {
		return err
	}
	defer svc.Close()
	_, err = adminCredentials(ctx, svc, file)
	return err
}
