package executord

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Config of executord.
type Config struct {
	Instance       string
	CredentialsKey string // push mode: the key that opens registrations' kubeconfigs
	// Pull mode: serve only this cluster, with this kubeconfig ("" = in-cluster credentials).
	Cluster    string
	Kubeconfig string
	// KubeAPIQPS and KubeAPIBurst rate-limit each member's client (seed 002).
	KubeAPIQPS   float32
	KubeAPIBurst int
	// ResyncInterval is how often status is read back and drift repaired,
	// and the first wait of a held apply or removal (doubled per failure, at
	// most 10 intervals).
	ResyncInterval time.Duration
	// Version is what a push-mode instance registers as its version.
	// Partitions and Lease are what it joins the instances with
	// (natsbus.InstanceOptions): 0, the fixed count and the default lease.
	Version    string
	Partitions int
	Lease      time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Instance: "0", KubeAPIQPS: 50, KubeAPIBurst: 100, ResyncInterval: 3 * time.Second}
}

// PullMode reports whether executord serves one cluster with local credentials.
func (c Config) PullMode() bool { return c.Cluster != "" }

// Validate returns every problem, with field names.
func (c Config) Validate() error {
	var errs []error
	if c.Instance == "" {
		errs = append(errs, fmt.Errorf("instance: must not be empty"))
	}
	if !c.PullMode() && c.CredentialsKey == "" {
		errs = append(errs, fmt.Errorf("credentials-key: push mode needs the credentials key (or use --cluster for pull mode)"))
	}
	if c.Kubeconfig != "" && c.Cluster == "" {
		errs = append(errs, fmt.Errorf("cluster: --kubeconfig needs --cluster NAME (pull mode)"))
	}
	if c.KubeAPIQPS <= 0 || c.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("kube-api-qps, kube-api-burst: must be positive"))
	}
	if c.Partitions < 0 {
		errs = append(errs, fmt.Errorf("partitions: must not be negative"))
	}
	if c.Lease < 0 {
		errs = append(errs, fmt.Errorf("lease: must not be negative"))
	}
	if c.ResyncInterval <= 0 {
		errs = append(errs, fmt.Errorf("resync-interval: must be positive"))
	}
	return errors.Join(errs...)
}

// RegisterFlags registers executord's own flags on fs, with c's values as
// their defaults and c's fields as their destinations. The process's flags
// (--instance, --metrics-addr, --credentials-key) are the command's; pull
// mode's are RegisterPullFlags'.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.Float32Var(&c.KubeAPIQPS, "kube-api-qps", c.KubeAPIQPS, "queries per second to each member API server")
	fs.IntVar(&c.KubeAPIBurst, "kube-api-burst", c.KubeAPIBurst, "burst of requests to each member API server")
	fs.DurationVar(&c.ResyncInterval, "resync-interval", c.ResyncInterval, "how often member objects are read back (status, drift)")
}

// RegisterPullFlags registers the flags of pull mode (one cluster, local
// credentials), which only a standalone executord takes: under
// `flotilla up` executord serves every registered cluster.
func (c *Config) RegisterPullFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Cluster, "cluster", c.Cluster, "pull mode: serve only this member cluster")
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "pull mode: the member's kubeconfig (default: in-cluster credentials)")
}
