// Package member turns a sealed member-cluster registration into a client-go
// REST config. healthd and executord both use it; neither imports the other.
package member

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/sealing"
)

// KubeconfigKeys are the Secret keys a kubeconfig may be stored under:
// Flotilla's own, seed 002's and seed 004's (`--from-file=value=...`).
var KubeconfigKeys = []string{"kubeconfig", "value", "config"}

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
		return nil, fmt.Errorf("secret %s/%s has no kubeconfig key (want one of %v)", reg.Credentials.Namespace, reg.Credentials.Name, KubeconfigKeys)
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
	cfg.QPS, cfg.Burst = qps, burst
	cfg.Timeout = 15 * time.Second
	cfg.UserAgent = "flotilla"
	return cfg, nil
}
