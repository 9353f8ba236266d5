// Package member turns a sealed member-cluster registration into a client-go
// REST config. healthd and executord both use it; neither imports the other.
package member

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/sealing"
)

// KubeconfigKeys are the Secret keys a kubeconfig may be stored under:
// Flotilla's own, seed 002's and seed 004's (`--from-file=value=...`).
var KubeconfigKeys = []string{"kubeconfig", "value", "config"}

// TokenKey and CABundleKey are the keys of the Secret karmadactl join
// writes for a push-mode member: a service account's bearer token and the
// member's CA bundle (PEM). The server is the Cluster's spec.apiEndpoint.
const (
	TokenKey    = "token"
	CABundleKey = "caBundle"
)

// RESTConfig opens the registration's sealed kubeconfig with key.
func RESTConfig(reg events.ClusterRegistration, key *sealing.Key, qps float32, burst int) (*rest.Config, error) {
	if reg.Credentials == nil {
		return nil, errors.New("no credentials: the Cluster's secretRef names no sealed Secret yet")
	}
	var sealed []byte
	for _, k := range KubeconfigKeys {
		if v, ok := reg.Credentials.Data[k]; ok {
			sealed = v
			break
		}
	}
	if sealed == nil {
		if _, ok := reg.Credentials.Data[TokenKey]; ok {
			return tokenConfig(reg, key, qps, burst)
		}
		return nil, fmt.Errorf("secret %s/%s has neither a kubeconfig key (one of %v) nor Karmada's %q and %q", reg.Credentials.Namespace, reg.Credentials.Name, KubeconfigKeys, TokenKey, CABundleKey)
	}
	raw, err := key.Open(sealed)
	if err != nil {
		return nil, err
	}
	if err := selfContained(raw); err != nil {
		return nil, err
	}
	return FromKubeconfig(raw, qps, burst)
}

// selfContained refuses a kubeconfig that came over the bus and would make
// the daemon run a command (an exec or auth-provider plugin) or read a file
// on its own host (token-file, client-certificate, client-key,
// certificate-authority) and send what it finds to the server the
// kubeconfig names. Whoever can publish a Cluster and its Secret could
// otherwise read the daemon host's files or run code on it. join embeds
// every file, so a kubeconfig it sealed always passes.
func selfContained(raw []byte) error {
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	for name, a := range cfg.AuthInfos {
		switch {
		case a.Exec != nil:
			return fmt.Errorf("kubeconfig: users[%s].user.exec: a kubeconfig from the bus may not run a command on the daemon's host (join with a token or client certificate)", name)
		case a.AuthProvider != nil:
			return fmt.Errorf("kubeconfig: users[%s].user.auth-provider: a kubeconfig from the bus may not use an auth provider plugin", name)
		case a.TokenFile != "":
			return fmt.Errorf("kubeconfig: users[%s].user.tokenFile: a kubeconfig from the bus may not read files on the daemon's host (embed the token)", name)
		case a.ClientCertificate != "" || a.ClientKey != "":
			return fmt.Errorf("kubeconfig: users[%s].user.client-certificate/client-key: a kubeconfig from the bus may not read files on the daemon's host (embed the data)", name)
		}
	}
	for name, c := range cfg.Clusters {
		if c.CertificateAuthority != "" {
			return fmt.Errorf("kubeconfig: clusters[%s].cluster.certificate-authority: a kubeconfig from the bus may not read files on the daemon's host (embed the data)", name)
		}
	}
	return nil
}

// FromKubeconfig builds a REST config from kubeconfig bytes.
func FromKubeconfig(raw []byte, qps float32, burst int) (*rest.Config, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return withClientDefaults(cfg, qps, burst), nil
}

// withClientDefaults sets what every member client of Flotilla's has:
// its rate limits, a 15 s timeout and the user agent.
func withClientDefaults(cfg *rest.Config, qps float32, burst int) *rest.Config {
	cfg.QPS, cfg.Burst = qps, burst
	cfg.Timeout = 15 * time.Second
	cfg.UserAgent = "flotilla"
	return cfg
}

// tokenConfig is the REST config of a registration whose Secret is in
// Karmada's own format (TokenKey, CABundleKey): the token and CA bundle
// opened with key, the server, TLS verification and proxy from the
// Cluster's spec, as Karmada builds its client for a push-mode member.
func tokenConfig(reg events.ClusterRegistration, key *sealing.Key, qps float32, burst int) (*rest.Config, error) {
	where := fmt.Sprintf("secret %s/%s", reg.Credentials.Namespace, reg.Credentials.Name)
	if reg.Spec.APIEndpoint == "" {
		return nil, fmt.Errorf("%s holds a token, so the Cluster needs spec.apiEndpoint (the member's API server)", where)
	}
	token, err := key.Open(reg.Credentials.Data[TokenKey])
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", where, TokenKey, err)
	}
	cfg := &rest.Config{Host: reg.Spec.APIEndpoint, BearerToken: strings.TrimSpace(string(token))}
	if sealed, ok := reg.Credentials.Data[CABundleKey]; ok {
		if cfg.CAData, err = key.Open(sealed); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, CABundleKey, err)
		}
	}
	cfg.Insecure = reg.Spec.InsecureSkipTLSVerification
	if cfg.Insecure {
		cfg.CAData = nil // client-go refuses a CA with insecure
	} else if len(cfg.CAData) == 0 {
		return nil, fmt.Errorf("%s has no %s and the Cluster does not set spec.insecureSkipTLSVerification", where, CABundleKey)
	}
	if reg.Spec.ProxyURL != "" {
		u, err := url.Parse(reg.Spec.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: spec.proxyURL: %w", reg.Name, err)
		}
		cfg.Proxy = http.ProxyURL(u)
	}
	return withClientDefaults(cfg, qps, burst), nil
}
