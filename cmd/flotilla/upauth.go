package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// upAuth is what `flotilla up` needs to run with authentication on: the
// authority under <data-dir>/auth and the credentials it writes under
// <data-dir>/creds.
type upAuth struct {
	authority *natsbus.Authority
	credsDir  string
}

// loadUpAuth loads or creates the authority of dataDir. With an external
// NATS (--nats-url) only an authority already there is used: that NATS
// trusts it only if it was configured to.
func loadUpAuth(dataDir string, create bool) (*upAuth, error) {
	dir := filepath.Join(dataDir, "auth")
	if !create {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
	}
	a, err := natsbus.LoadOrCreateAuthority(dir)
	if err != nil {
		return nil, err
	}
	credsDir := filepath.Join(dataDir, "creds")
	if err := os.MkdirAll(credsDir, 0o700); err != nil {
		return nil, err
	}
	return &upAuth{authority: a, credsDir: credsDir}, nil
}

// mint writes the credentials of up's own connection for role, named
// "up-<role>", and returns the file. They are signed in process, not
// recorded by the credentials service (they are made afresh at every start
// and never leave the data directory).
func (u *upAuth) mint(role string) (string, error) {
	g, err := roleGrant(natsbus.IssueRequest{Role: role})
	if err != nil {
		return "", err
	}
	raw, err := u.authority.UserCredentials("up-"+role, role, g)
	if err != nil {
		return "", err
	}
	file := filepath.Join(u.credsDir, "up-"+role+".creds")
	return file, writeSecret(file, raw)
}

// serveCredentials starts the credentials service on bus (up's admin
// connection), writes <data-dir>/creds/admin.creds on first start and
// registers it for natsURL, so plain `flotilla` commands find it.
func (u *upAuth) serveCredentials(ctx context.Context, bus *natsbus.Bus, natsURL string, log *zap.Logger, errw io.Writer) (*natsbus.CredentialService, error) {
	svc, err := natsbus.NewCredentialService(ctx, bus, u.authority, roleGrant)
	if err != nil {
		return nil, err
	}
	admin := filepath.Join(u.credsDir, "admin.creds")
	raw, err := os.ReadFile(admin)
	if errors.Is(err, os.ErrNotExist) {
		if raw, err = svc.Credentials(ctx, natsbus.IssueRequest{Role: roleAdmin, Name: "admin"}); err == nil {
			err = writeSecret(admin, raw)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("admin credentials: %w", err)
	}
	where, err := register(natsURL, raw)
	if err != nil {
		// Commands can still be given --creds: not fatal.
		fmt.Fprintf(errw, "flotilla up: could not register the admin credentials (%v); use --creds %s\n", err, admin)
	}
	log.Info("authentication on", zap.String("admin_credentials", admin), zap.String("registered", where))
	return svc, nil
}

// connectAs opens the connection one daemon of up runs on, with its own
// role's credentials.
func (u *upAuth) connectAs(ctx context.Context, daemon, natsURL string, rt *runtime) (*natsbus.Bus, error) {
	file, err := u.mint(daemon)
	if err != nil {
		return nil, err
	}
	return natsbus.Connect(ctx, natsURL, natsbus.Options{Name: "flotilla-" + daemon, Log: rt.log, Metrics: rt.metrics, Credentials: file})
}

// warnInsecure says, on standard error and in the log, that up runs
// without authentication, and forgets credentials registered for its URL.
func warnInsecure(natsURL string, log *zap.Logger, errw io.Writer) {
	unregister(natsURL)
	log.Warn("authentication is OFF (--insecure)", zap.String("nats_url", natsURL))
	fmt.Fprintf(errw, "flotilla up: WARNING: authentication is OFF (--insecure): anyone who reaches %s can publish, read and delete everything\n", natsURL)
}
