package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// tlsCAEnv names the CA file every command trusts when --tls-ca is not
// given.
const tlsCAEnv = "FLOTILLA_TLS_CA"

// serverCA is the CA a command verifies the server's TLS certificate with:
// --tls-ca or FLOTILLA_TLS_CA, else the CA registered for the first URL of
// --nats-url that has one, else none (a plain server, or TLS verified
// against the system's CAs).
func (g *globals) serverCA() string {
	if g.tlsCA != "" {
		return g.tlsCA
	}
	return firstRegistered(g.natsURL, caExt)
}

// upTLS are up's TLS flags (its CA is the global --tls-ca).
type upTLS struct {
	on        bool
	cert, key string
}

func (t *upTLS) register(fs *pflag.FlagSet) {
	fs.BoolVar(&t.on, "tls", false, "serve client connections over TLS only, with a CA and server certificate generated under <data-dir>/tls on first start (or --tls-cert, --tls-key and --tls-ca); with --nats-url: connect to that NATS over TLS only, verified with --tls-ca or the CA registered for its URLs")
	fs.StringVar(&t.cert, "tls-cert", "", "with --tls: the server's certificate (PEM) instead of a generated one")
	fs.StringVar(&t.key, "tls-key", "", "with --tls: the key of --tls-cert (PEM)")
}

// serve is the embedded server's TLS option, none without --tls. It makes
// g.tlsCA the CA up's own connections trust; with --nats-url, --tls only
// insists on one (given or registered).
func (t *upTLS) serve(g *globals, dataDir, listen string, embedded bool) ([]natsbus.EmbeddedOption, error) {
	switch {
	case !t.on && (t.cert != "" || t.key != ""):
		return nil, fmt.Errorf("--tls-cert and --tls-key need --tls")
	case !t.on:
		return nil, nil
	case !embedded && (t.cert != "" || t.key != ""):
		return nil, fmt.Errorf("--tls-cert and --tls-key serve the embedded NATS; with --nats-url, --tls verifies that NATS with --tls-ca")
	case !embedded:
		// A NATS of its own (make nats-cluster TLS=1): verify it, with the
		// CA given or the one registered for its URLs; never dial it plain.
		ca := g.serverCA()
		if ca == "" {
			return nil, fmt.Errorf("--tls with --nats-url %s: no CA to verify it with; give --tls-ca (make nats-cluster TLS=1 registers .sandbox/nats/tls/ca.pem for its URLs)", g.natsURL)
		}
		g.tlsCA = ca
		return nil, nil
	}
	files, err := t.files(dataDir, listen, g.tlsCA)
	if err != nil {
		return nil, err
	}
	g.tlsCA = files.CA
	return []natsbus.EmbeddedOption{natsbus.WithTLS(files)}, nil
}

// files are the certificate, key and CA up serves with: the ones given,
// or those generated under dataDir/tls for 127.0.0.1, ::1, localhost and
// listen's host.
func (t *upTLS) files(dataDir, listen, ca string) (natsbus.TLSFiles, error) {
	if t.cert != "" || t.key != "" {
		if t.cert == "" || t.key == "" || ca == "" {
			return natsbus.TLSFiles{}, fmt.Errorf("--tls-cert, --tls-key and --tls-ca go together (clients need the CA)")
		}
		return natsbus.TLSFiles{Cert: t.cert, Key: t.key, CA: ca}, nil
	}
	var hosts []string
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" && h != "0.0.0.0" && h != "::" {
		hosts = append(hosts, h)
	}
	return natsbus.LoadOrCreateTLS(filepath.Join(dataDir, "tls"), hosts)
}

// registerCA makes the CA in the PEM file ca the one every later command
// trusts for natsURL (each URL of a list) and returns where it put it; with
// ca "" it forgets one registered there instead: a plain server took the
// port, and a client trusting a CA insists on TLS.
func registerCA(natsURL, ca string) ([]string, error) {
	if ca == "" {
		for _, u := range strings.Split(natsURL, ",") {
			if p, err := registeredPath(u, caExt); err == nil {
				_ = os.Remove(p)
			}
		}
		return nil, nil
	}
	raw, err := os.ReadFile(ca)
	if err != nil {
		return nil, fmt.Errorf("read the TLS CA: %w", err)
	}
	return register(natsURL, caExt, raw)
}

// registerServerCA registers the CA of up's TLS server for its URL, or,
// serving plain, forgets one an earlier up registered there. A CA that
// cannot be registered is not fatal: commands can be given --tls-ca.
func registerServerCA(natsURL, ca string, on bool, log *zap.Logger, errw io.Writer) {
	if !on {
		ca = ""
	}
	where, err := registerCA(natsURL, ca)
	switch {
	case err != nil:
		fmt.Fprintf(errw, "flotilla up: could not register the TLS CA (%v); give commands --tls-ca %s\n", err, ca)
	case on:
		log.Info("TLS on", zap.String("ca", ca), zap.Strings("registered", where))
	}
}
