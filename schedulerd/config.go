package schedulerd

import (
	"errors"
	"fmt"
	"time"
)

// Config of schedulerd.
type Config struct {
	Instance string
	// Evictions: failover's eviction rate limit.
	Evictions EvictionLimit
	// FailoverTick: how often due tolerations and grace periods are checked.
	FailoverTick time.Duration
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
	if c.FailoverTick <= 0 {
		errs = append(errs, fmt.Errorf("failover-tick: must be positive"))
	}
	return errors.Join(errs...)
}
