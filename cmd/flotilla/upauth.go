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
// authority under --auth-dir (<data-dir>/auth by default) and the
// credentials it writes in the creds directory beside it.
type upAuth struct {
	authority *natsbus.Authority
	credsDir  string
}

// loadUpAuth loads the authority in authDir, creating it if create (the
// embedded server). An external NATS (--nats-url) trusts only an
// authority it was set up with, so there only one already in authDir is
// used: none is an error when required (--auth-dir given), else nil.
func loadUpAuth(authDir string, create, required bool) (*upAuth, error) {
	var a *natsbus.Authority
	var err error
	if create {
		a, err = natsbus.LoadOrCreateAuthority(authDir)
	} else {
		if _, serr := os.Stat(authDir); errors.Is(serr, os.ErrNotExist) && !required {
			return nil, nil
		}
		a, err = natsbus.LoadAuthority(authDir)
	}
	if err != nil {
		return nil, fmt.Errorf("--auth-dir: %w", err)
	}
	credsDir := credsDirOf(authDir)
	if err := os.MkdirAll(credsDir, 0o700); err != nil {
		return nil, err
	}
	return &upAuth{authority: a, credsDir: credsDir}, nil
}

// credsDirOf is where the credentials of the authority in authDir are
// written: creds/ beside it (<data-dir>/creds for up's default,
// .sandbox/nats/creds for make nats-cluster's).
func credsDirOf(authDir string) string { return filepath.Join(filepath.Dir(authDir), "creds") }

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
// connection), writes admin.creds in the creds directory on first start
// and registers it for natsURL (each URL of a cluster's list), so plain
// `flotilla` commands find it.
func (u *upAuth) serveCredentials(ctx context.Context, bus *natsbus.Bus, natsURL string, log *zap.Logger, errw io.Writer) (*natsbus.CredentialService, error) {
	svc, err := natsbus.NewCredentialService(ctx, bus, u.authority, roleGrant)
	if err != nil {
		return nil, err
	}
	admin := filepath.Join(u.credsDir, "admin.creds")
	raw, err := adminCredentials(ctx, svc, admin)
	if err != nil {
		svc.Close()
		return nil, err
	}
	where, err := register(natsURL, credsExt, raw)
	if err != nil {
		// Commands can still be given --creds: not fatal.
		fmt.Fprintf(errw, "flotilla up: could not register the admin credentials (%v); use --creds %s\n", err, admin)
	}
	log.Info("authentication on", zap.String("admin_credentials", admin), zap.Strings("registered", where))
	return svc, nil
}

// adminCredentials returns the admin credentials in file, issuing them
// through svc (recorded as "admin", so `creds revoke admin` revokes them)
// and writing them there (mode 0600) when the file is missing.
func adminCredentials(ctx context.Context, svc *natsbus.CredentialService, file string) ([]byte, error) {
	raw, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		if raw, err = svc.Credentials(ctx, natsbus.IssueRequest{Role: roleAdmin, Name: "admin"}); err == nil {
			err = writeSecret(file, raw)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("admin credentials: %w", err)
	}
	return raw, nil
}

// connectAs opens the connection one daemon of up runs on, with its own
// role's credentials.
func (u *upAuth) connectAs(ctx context.Context, daemon, natsURL string, rt *runtime) (*natsbus.Bus, error) {
	file, err := u.mint(daemon)
	if err != nil {
		return nil, err
	}
	return natsbus.Connect(ctx, natsURL, natsbus.Options{Name: "flotilla-" + daemon, Log: rt.log, Metrics: rt.metrics, Credentials: file, TLSCA: rt.tlsCA})
}

// warnInsecure says, on standard error and in the log, that up runs
// without authentication, and forgets credentials registered for its URL.
func warnInsecure(natsURL string, log *zap.Logger, errw io.Writer) {
	unregister(natsURL)
	log.Warn("authentication is OFF (--insecure)", zap.String("nats_url", natsURL))
	fmt.Fprintf(errw, "flotilla up: WARNING: authentication is OFF (--insecure): anyone who reaches %s can publish, read and delete everything\n", natsURL)
}
