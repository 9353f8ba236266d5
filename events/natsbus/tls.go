package natsbus

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// TLSFiles are the PEM files a TLS server serves with: its certificate and
// key, and the CA that signed the certificate (what clients verify with).
type TLSFiles struct {
	Cert, Key, CA string
}

// Lifetimes of the generated certificates.
const (
	caValidity     = 10 * 365 * 24 * time.Hour
	serverValidity = 10 * 365 * 24 * time.Hour
)

// LoadOrCreateTLS returns the CA and server certificate under dir
// (ca.pem, server.pem, server-key.pem), generating them on first use: an
// ECDSA P-256 CA valid 10 years and a server certificate it signs for
// 127.0.0.1, ::1, localhost and hosts, for server and client auth (the
// nodes of a cluster share it, on client and route connections). Files already there are kept as
// they are, so clients holding the CA keep trusting the server.
func LoadOrCreateTLS(dir string, hosts []string) (TLSFiles, error) {
	f := TLSFiles{Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server-key.pem"), CA: filepath.Join(dir, "ca.pem")}
	if _, err := os.Stat(f.Cert); err == nil {
		return f, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return f, fmt.Errorf("tls: %w", err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	now := time.Now().Add(-time.Hour) // tolerate clocks slightly behind
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "flotilla CA", Organization: []string{"flotilla"}},
		NotBefore:             now,
		NotAfter:              now.Add(caValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return f, fmt.Errorf("tls: CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return f, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "flotilla nats", Organization: []string{"flotilla"}},
		NotBefore:    now,
		NotAfter:     now.Add(serverValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// Client auth too: the nodes of a cluster present it to one another
		// on their routes (routeTLS), where each verifies the other's.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range append([]string{"127.0.0.1", "::1", "localhost"}, hosts...) {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return f, fmt.Errorf("tls: server certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return f, err
	}
	// The CA's key is not kept: nothing else is ever signed with it, and a
	// key that does not exist cannot leak. A new certificate is a new CA.
	// The certificate is written last: its presence means all three exist.
	for _, w := range []struct {
		path, kind string
		der        []byte
	}{{f.CA, "CERTIFICATE", caDER}, {f.Key, "EC PRIVATE KEY", keyDER}, {f.Cert, "CERTIFICATE", der}} {
		if err := os.WriteFile(w.path, pem.EncodeToMemory(&pem.Block{Type: w.kind, Bytes: w.der}), 0o600); err != nil {
			return f, fmt.Errorf("tls: %w", err)
		}
	}
	return f, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// EmbeddedOption configures StartEmbedded beyond its defaults.
type EmbeddedOption func(*server.Options) error

// WithTLS makes the embedded server accept client connections over TLS
// only, serving f's certificate and key.
func WithTLS(f TLSFiles) EmbeddedOption {
	return func(opts *server.Options) error {
		cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return fmt.Errorf("--tls-cert %s / --tls-key %s: %w", f.Cert, f.Key, err)
		}
		opts.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		opts.TLS = true
		opts.TLSTimeout = 5 // seconds, for the handshake
		return nil
	}
}

// routeTLS makes a cluster node's routes TLS both ways: it presents f's
// certificate and accepts, or dials, only a node whose certificate f's CA
// signed. A node without the CA can neither join the cluster nor be
// joined by it.
func routeTLS(opts *server.Options, f TLSFiles) error {
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return fmt.Errorf("tls %s / %s: %w", f.Cert, f.Key, err)
	}
	pool, err := caPool(f.CA)
	if err != nil {
		return err
	}
	opts.Cluster.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, RootCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	opts.Cluster.TLSTimeout = 5
	return nil
}

// caPool is the pool of the CA certificates in the PEM file caFile.
func caPool(caFile string) (*x509.CertPool, error) {
	raw, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(raw) {
		return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", caFile)
	}
	return pool, nil
}

// clientTLS is the TLS configuration of a client that trusts the CA in
// the PEM file caFile only.
func clientTLS(caFile string) (*tls.Config, error) {
	pool, err := caPool(caFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// untrustedServer says what to do when the server's certificate was not
// verified: give the CA it was signed with.
func untrustedServer(err error) error {
	var unknown x509.UnknownAuthorityError
	var invalid x509.HostnameError
	var cert *tls.CertificateVerificationError
	switch {
	case errors.As(err, &invalid):
		return fmt.Errorf("%w (the server's TLS certificate does not name the host dialed)", err)
	case errors.As(err, &unknown), errors.As(err, &cert):
		return fmt.Errorf("%w (the server's TLS certificate is signed by a CA this client does not trust: give --tls-ca or FLOTILLA_TLS_CA, e.g. <data-dir>/tls/ca.pem of flotilla up --tls)", err)
	}
	return nil
}
