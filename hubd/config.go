package hubd

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Config of hubd.
type Config struct {
	// Instance names this process in event sources (/hubd/<instance>).
	Instance string
	// HubKubeconfig is the kubeconfig of the hub's API server: any
	// kube-apiserver with the CRDs of deploy/crds (flotilla hub install).
	HubKubeconfig string
	// Namespaces are the namespaces whose templates hubd mirrors; none
	// means every namespace but those mirror.WatchedNamespaces leaves out.
	Namespaces []string
	// Interval is how often hubd writes the bus's state back to the hub
	// (statuses, bindings, Clusters, events).
	Interval time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{Instance: "0", Interval: 2 * time.Second} }

// Validate returns every problem, with field names.
func (c Config) Validate() error {
	var errs []error
	if c.Instance == "" {
		errs = append(errs, errors.New("instance: must not be empty"))
	}
	if c.HubKubeconfig == "" {
		errs = append(errs, errors.New("hubKubeconfig: required (--hub-kubeconfig)"))
	}
	if c.Interval <= 0 {
		errs = append(errs, fmt.Errorf("interval: %s is not positive", c.Interval))
	}
	return errors.Join(errs...)
}

// RegisterFlags registers hubd's own flags on fs, with c's values as their
// defaults and c's fields as their destinations.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.HubKubeconfig, "hub-kubeconfig", c.HubKubeconfig, "kubeconfig of the hub: the kube-apiserver kubectl, Helm or Argo CD apply to (docs/hub.md); flotilla hub install puts Flotilla's CRDs there")
	fs.StringSliceVar(&c.Namespaces, "namespaces", c.Namespaces, "namespaces whose templates the hub mirrors (default: all but kube-system, kube-public, kube-node-lease, karmada-system)")
	fs.DurationVar(&c.Interval, "hub-interval", c.Interval, "how often the bus's state is written back to the hub (statuses, bindings, Clusters)")
}
