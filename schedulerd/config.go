package schedulerd

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Config of schedulerd.
type Config struct {
	Instance string
	// Evictions: failover's eviction rate limit.
	Evictions EvictionLimit
	// FailoverTick: how often due tolerations and grace periods are checked.
	FailoverTick time.Duration
	// Version is what the instance registers as its version.
	Version string
	// Partitions asks for a partition count (0: the one fixed, or
	// natsbus.DefaultPartitions on the first start); Lease is the lease
	// period used if this instance creates the buckets (0: the default).
	Partitions int
	Lease      time.Duration
}

// DefaultEvictionLimit: 20 evictions per second, bursts of 100.
var DefaultEvictionLimit = EvictionLimit{PerSecond: 20, Burst: 100}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{Instance: "0", Evictions: DefaultEvictionLimit, FailoverTick: 250 * time.Millisecond}
}

// Validate returns every problem, with field names.
func (c Config) Validate() error {
	var errs []error
	if c.Instance == "" {
		errs = append(errs, fmt.Errorf("instance: must not be empty"))
	}
	if c.Evictions.PerSecond < 0 {
		errs = append(errs, fmt.Errorf("eviction-rate: must not be negative"))
	}
	if c.Partitions < 0 {
		errs = append(errs, fmt.Errorf("partitions: must not be negative"))
	}
	if c.Lease < 0 {
		errs = append(errs, fmt.Errorf("lease: must not be negative"))
	}
	if c.FailoverTick <= 0 {
		errs = append(errs, fmt.Errorf("failover-tick: must be positive"))
	}
	return errors.Join(errs...)
}

// RegisterFlags registers schedulerd's own flags on fs, with c's values
// as their defaults and c's fields as their destinations. The process's
// flags (--instance, --metrics-addr) are the command's.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.Float64Var(&c.Evictions.PerSecond, "eviction-rate", c.Evictions.PerSecond, "failover evictions per second at most, so an outage does not stampede the remaining clusters (0: no limit)")
	fs.IntVar(&c.Evictions.Burst, "eviction-burst", c.Evictions.Burst, "evictions allowed at once before --eviction-rate applies")
	fs.DurationVar(&c.FailoverTick, "failover-tick", c.FailoverTick, "how often tolerations, grace periods and deferred evictions are checked")
}
