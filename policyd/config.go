package policyd

import (
	"errors"
	"fmt"
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
	return errors.Join(errs...)
}
