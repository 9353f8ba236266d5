package healthd

import (
	"errors"
	"fmt"
	"time"
)

// Config of healthd.
type Config struct {
	Instance         string
	ProbeInterval    time.Duration // how often /readyz is probed
	ProbeTimeout     time.Duration // one probe's deadline
	FailureThreshold int           // consecutive failed probes before NotReady/Unreachable
	SuccessThreshold int           // consecutive good probes before a NotReady cluster is Ready again
	CapacityInterval time.Duration // how often Nodes and Pods are read
	CredentialsKey   string        // path of the credentials key file
}

// DefaultConfig returns the defaults: detection of a lost cluster takes
// FailureThreshold × ProbeInterval + ProbeTimeout = 3 × 2s + 2s = 8s.
func DefaultConfig() Config {
	return Config{Instance: "0", ProbeInterval: 2 * time.Second, ProbeTimeout: 2 * time.Second,
		FailureThreshold: 3, SuccessThreshold: 2, CapacityInterval: 5 * time.Second}
}

// Validate returns every problem, with field names.
func (c Config) Validate() error {
	var errs []error
	if c.Instance == "" {
		errs = append(errs, fmt.Errorf("instance: must not be empty"))
	}
	if c.ProbeInterval <= 0 {
		errs = append(errs, fmt.Errorf("probe-interval: must be positive"))
	}
	if c.ProbeTimeout <= 0 {
		errs = append(errs, fmt.Errorf("probe-timeout: must be positive"))
	}
	if c.FailureThreshold < 1 || c.SuccessThreshold < 1 {
		errs = append(errs, fmt.Errorf("failure-threshold, success-threshold: must be at least 1"))
	}
	if c.CapacityInterval <= 0 {
		errs = append(errs, fmt.Errorf("capacity-interval: must be positive"))
	}
	if c.CredentialsKey == "" {
		errs = append(errs, fmt.Errorf("credentials-key: healthd needs the credentials key file to read member capacity"))
	}
	return errors.Join(errs...)
}
