package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// credentialsEnv names the credentials file every command uses when
// --creds is not given.
const credentialsEnv = "FLOTILLA_CREDS"

// Extensions of the files registered for a NATS URL (registeredPath).
const (
	credsExt = ".creds"
	caExt    = ".ca"
)

// registryDir is where `flotilla up` registers its admin credentials for
// its client URL, under the user's config directory (XDG_CONFIG_HOME).
func registryDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "flotilla", "credentials"), nil
}

// registeredPath is the file that holds what is registered for a NATS
// URL: <host>_<port>.creds its credentials, <host>_<port>.ca the CA of its
// TLS certificate.
func registeredPath(natsURL, ext string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(natsURL))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("NATS URL %q: not a URL", natsURL)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "4222"
	}
	dir, err := registryDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, host+"_"+port+ext), nil
}

// credentials is the credentials file a command connects with: --creds or
// FLOTILLA_CREDS, else the file registered for the first URL of --nats-url
// that has one, else none (a server with authentication off).
func (g *globals) credentials() string {
	if g.creds != "" {
		return g.creds
	}
	return firstRegistered(g.natsURL, credsExt)
}

// firstRegistered is the file with ext registered for the first URL of
// natsURL (a comma-separated list) that has one, or "".
func firstRegistered(natsURL, ext string) string {
	for _, u := range strings.Split(natsURL, ",") {
		if p, err := registeredPath(u, ext); err == nil {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	return ""
}

// register makes raw the credentials (ext credsExt) or the CA (caExt) of
// natsURL, or of each URL of a cluster's comma-separated list, for every
// later command of this user, and returns where it put them: a command
// dialing any one node, or the list, finds them.
func register(natsURL, ext string, raw []byte) ([]string, error) {
	var files []string
	for _, u := range strings.Split(natsURL, ",") {
		p, err := registeredPath(u, ext)
		if err != nil {
			return files, err
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return files, err
		}
		if err := writeSecret(p, raw); err != nil {
			return files, err
		}
		files = append(files, p)
	}
	return files, nil
}

// unregister removes the credentials registered for natsURL or each URL
// of its list (an insecure server took the port: stale credentials would
// only mislead).
func unregister(natsURL string) {
	for _, u := range strings.Split(natsURL, ",") {
		if p, err := registeredPath(u, credsExt); err == nil {
			_ = os.Remove(p)
		}
	}
}

// writeSecret writes a credentials file, readable by its owner only, by
// renaming a complete file into place.
func writeSecret(path string, raw []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// refusedDuring runs fn and returns its error, or the bus's first refusal
// as soon as it arrives: a permission violation reaches the connection
// asynchronously while fn waits for a reply that will never come.
func refusedDuring(verb string, bus *natsbus.Bus, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case err := <-bus.Refused():
		return fmt.Errorf("flotilla %s: %w", verb, err)
	}
}

func newCreds(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "creds",
		Short: "Issue and revoke credentials for the bus (needs admin credentials)",
		Long: `Issue and revoke the credentials daemons, users and external systems connect
with. The running system signs them (flotilla up serves the requests): only
admin credentials and the URL are needed, not the data directory.

Roles: ` + strings.Join(roleNames(), ", ") + `. docs/security.md says what each may do.`,
	}
	c.AddCommand(newCredsIssue(g), newCredsRevoke(g))
	return c
}

// revokeOwn revokes the credential the command connects with: the
// revocation closes the connection it was asked on, often before its
// answer arrives, which is its success (it was reported as a refusal).
func revokeOwn(cmd *cobra.Command, g *globals, name string) error {
	bus, err := g.connect(cmd.Context())
	if err != nil {
		return err
	}
	defer bus.Close()
	done := make(chan error, 1)
	go func() {
		_, err := bus.RevokeCredentials(cmd.Context(), name)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return err
		}
	case err := <-bus.Refused():
		if !natsbus.Revoked(err) {
			return fmt.Errorf("flotilla %s: %w", g.verb, err)
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "revoked %q; its connections are closed, this one included\n", name)
	return nil
}

func newCredsIssue(g *globals) *cobra.Command {
	var req natsbus.IssueRequest
	var out string
	c := &cobra.Command{
		Use:     "issue ROLE NAME -o FILE",
		Short:   "Issue a credentials file for ROLE, named NAME",
		Example: "  flotilla creds issue publisher ci -o ci.creds\n  flotilla creds issue publisher team-a --namespace team-a -o team-a.creds\n  flotilla creds issue executord exec-cluster1 --cluster cluster1 -o exec1.creds",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Role, req.Name = args[0], args[1]
			if _, err := roleGrant(req); err != nil {
				return err
			}
			if req.Namespace != "" {
				if msgs := kvalidation.IsDNS1123Label(req.Namespace); len(msgs) > 0 {
					return fmt.Errorf("--namespace %q: %s", req.Namespace, strings.Join(msgs, "; "))
				}
			}
			// The file must be writable before a credential is issued: one
			// issued and not written would be live, and nobody's.
			if err := os.WriteFile(out+".tmp", nil, 0o600); err != nil {
				return fmt.Errorf("-o %s: %w (nothing was issued)", out, err)
			}
			_ = os.Remove(out + ".tmp")
			return g.withBus(cmd.Context(), func(bus *natsbus.Bus) error {
				raw, err := bus.IssueCredentials(cmd.Context(), req)
				if err != nil {
					return err
				}
				if err := writeSecret(out, raw); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "issued %s credential %q to %s\n", req.Role, req.Name, out)
				return nil
			})
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "credentials file to write (mode 0600)")
	c.Flags().StringVar(&req.Cluster, "cluster", "", "executord: serve only this member cluster")
	c.Flags().StringVar(&req.Namespace, "namespace", "", "publisher: publish only this namespace's objects")
	_ = c.MarkFlagRequired("output")
	return c
}

func newCredsRevoke(g *globals) *cobra.Command {
	var self bool
	c := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke every credential issued as NAME, open connections included",
		Long: `Revoke every credential issued as NAME, open connections included.

Revoking the credential this command connects with (the admin credentials
flotilla up registered, say) locks this CLI out: it is refused unless
--revoke-my-own is given. Admin credentials are made again only by deleting
creds/admin.creds under up's --data-dir and restarting up (docs/security.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, own := args[0], false
			if file := g.credentials(); file != "" {
				if id, err := natsbus.ReadIdentity(file); err == nil && id.Name == name {
					if !self {
						return fmt.Errorf("this command connects as %q (%s): revoking it closes this connection and locks every command using it out; "+
							"connect with another admin credential (--creds FILE), or pass --revoke-my-own", name, file)
					}
					own = true
				}
			}
			if own {
				return revokeOwn(cmd, g, name)
			}
			return g.withBus(cmd.Context(), func(bus *natsbus.Bus) error {
				n, err := bus.RevokeCredentials(cmd.Context(), name)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "revoked %q (%d key(s)); its connections are closed\n", name, n)
				return nil
			})
		},
	}
	c.Flags().BoolVar(&self, "revoke-my-own", false, "revoke NAME even when it is the credential this command connects with (locks it out)")
	return c
}
