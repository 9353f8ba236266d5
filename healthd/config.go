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
	// SnapshotInterval: how often every member's health is published as
	// one HealthSnapshot, for consumers that resync. 0: never.
	SnapshotInterval time.Duration
	// NoExecuteAfter: how long a member must have been NotReady or
	// Unreachable before its taint is added with effect NoExecute (the
	// default cluster taint policy). 0: never.
	NoExecuteAfter time.Duration
	// TaintPolicyFile: Karmada ClusterTaintPolicy YAML whose rules replace
	// the default policy (NoExecuteAfter is then unused). "": the default.
	TaintPolicyFile string
}

// DefaultConfig returns the defaults. A lost cluster is detected (NotReady
// or Unreachable, NoSchedule taint) after at worst
// FailureThreshold × ProbeInterval + ProbeTimeout = 3 × 2s + 2s = 8s, and
// tainted NoExecute NoExecuteAfter = 300s after that.
//
// Why these figures: /readyz is cheap (the API server answers it in
// milliseconds, from memory), so 2s is a generous timeout and probing every
// 2s costs a member one small request. Three failures in a row rule out one
// slow probe or a dropped connection. A false alarm costs little, because
// NoSchedule only keeps new placements away; the costly step, NoExecute,
// waits 300s as the issue asks, and schedulerd's tolerations add to it.
func DefaultConfig() Config {
	return Config{Instance: "0", ProbeInterval: 2 * time.Second, ProbeTimeout: 2 * time.Second,
		FailureThreshold: 3, SuccessThreshold: 2, CapacityInterval: 5 * time.Second,
		SnapshotInterval: 30 * time.Second, NoExecuteAfter: 300 * time.Second}
}

// Detection is the worst-case time from a member's loss to its NotReady
// or Unreachable transition: FailureThreshold × ProbeInterval +
// ProbeTimeout. The loss may come just after a good probe; the next
// FailureThreshold probes must fail, the last one only at its timeout. A
// probe that outlasts the interval delays the next one, so with
// ProbeTimeout > ProbeInterval it is ProbeInterval + FailureThreshold ×
// ProbeTimeout.
func (c Config) Detection() time.Duration {
	n := time.Duration(c.FailureThreshold)
	if c.ProbeTimeout > c.ProbeInterval {
		return c.ProbeInterval + n*c.ProbeTimeout
	}
	return n*c.ProbeInterval + c.ProbeTimeout
}

// Thresholds are the state machine's.
func (c Config) Thresholds() Thresholds {
	return Thresholds{Failure: c.FailureThreshold, Success: c.SuccessThreshold}
}

// TaintPolicy is the cluster taint policy the flags describe.
func (c Config) TaintPolicy() TaintPolicy { return TaintPolicy{NoExecuteAfter: c.NoExecuteAfter} }

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
	if c.FailureThreshold < 1 {
		errs = append(errs, fmt.Errorf("failure-threshold: must be at least 1"))
	}
	if c.SuccessThreshold < 1 {
		errs = append(errs, fmt.Errorf("success-threshold: must be at least 1"))
	}
	if c.CapacityInterval <= 0 {
		errs = append(errs, fmt.Errorf("capacity-interval: must be positive"))
	}
	if c.SnapshotInterval < 0 {
		errs = append(errs, fmt.Errorf("snapshot-interval: must not be negative (0 switches snapshots off)"))
	}
	if c.NoExecuteAfter < 0 {
		errs = append(errs, fmt.Errorf("no-execute-after: must not be negative (0 switches NoExecute taints off)"))
	}
	if c.CredentialsKey == "" {
		errs = append(errs, fmt.Errorf("credentials-key: healthd needs the credentials key file to read member capacity"))
	}
	return errors.Join(errs...)
}
