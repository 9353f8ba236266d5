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
	return FromKubeconfig(raw, qps, burst)
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
