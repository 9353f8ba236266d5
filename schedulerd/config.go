package schedulerd

import (
	"errors"
	"fmt"
)

// Config of schedulerd.
type Config struct {
	Instance string
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config { return Config{Instance: "0"} }

// Validate returns every problem, with field names.
func (c Config) Validate() error {
	var errs []error
	if c.Instance == "" {
		errs = append(errs, fmt.Errorf("instance: must not be empty"))
	}
	return errors.Join(errs...)
}
