package policyd

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Config of policyd.
type Config struct {
	// Instance names this process in event sources (/policyd/<instance>).
	Instance string
	// MaxReplicas, when above 0, is the most replicas a template may ask
	// for (in its policy.ReplicaField): policyd rejects a larger one with
	// object.rejected instead of binding it, so one mistyped count cannot
	// flood the members. 0 means no limit.
	MaxReplicas int32
	// Version is what the instance registers as its version.
	Version string
	// Partitions asks for a partition count (0: the one fixed, or
	// natsbus.DefaultPartitions on the first start); Lease is the lease
	// period used if this instance creates the buckets (0: the default).
	Partitions int
	Lease      time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{Instance: "0"} }

// Validate returns every problem, with field names.
func (c Config) Validate() error {
	var errs []error
	if c.Instance == "" {
		errs = append(errs, fmt.Errorf("instance: must not be empty"))
	}
	if c.MaxReplicas < 0 {
		errs = append(errs, fmt.Errorf("maxReplicas: %d is negative (0 means no limit)", c.MaxReplicas))
	}
	if c.Partitions < 0 {
		errs = append(errs, fmt.Errorf("partitions: must not be negative"))
	}
	if c.Lease < 0 {
		errs = append(errs, fmt.Errorf("lease: must not be negative"))
	}
	return errors.Join(errs...)
}

// RegisterFlags registers policyd's own flags on fs, with c's values as
// their defaults and c's fields as their destinations. The process's flags
// (--instance, --metrics-addr) are the command's: `flotilla up` runs four
// daemons under one set of them.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.Int32Var(&c.MaxReplicas, "max-replicas", c.MaxReplicas, "reject a template whose replicas (spec.replicas of a Deployment, StatefulSet or ReplicaSet, spec.parallelism of a Job) exceed this, with an object.rejected event giving the reason, instead of placing it (0: no limit; docs/policy.md)")
}
