package healthd

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
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
	// Version is what the instance registers as its version. Partitions
	// and Lease are what it joins the instances with
	// (natsbus.InstanceOptions): 0, the fixed count and the default lease.
	Version    string
	Partitions int
	Lease      time.Duration
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
	if c.Partitions < 0 {
		errs = append(errs, fmt.Errorf("partitions: must not be negative"))
	}
	if c.Lease < 0 {
		errs = append(errs, fmt.Errorf("lease: must not be negative"))
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

// RegisterFlags registers healthd's own flags on fs, with c's values as
// their defaults and c's fields as their destinations. The process's flags
// (--instance, --metrics-addr, --credentials-key, which executord shares
// under `flotilla up`) are the command's.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&c.ProbeInterval, "probe-interval", c.ProbeInterval, "how often each member's /readyz is probed; a lost member is NotReady/Unreachable (tainted NoSchedule) after at worst failure-threshold × probe-interval + probe-timeout ("+c.Detection().String()+" with the defaults)")
	fs.DurationVar(&c.ProbeTimeout, "probe-timeout", c.ProbeTimeout, "deadline of one probe (above probe-interval, detection takes probe-interval + failure-threshold × probe-timeout)")
	fs.IntVar(&c.FailureThreshold, "failure-threshold", c.FailureThreshold, "failed probes in a row before a member is NotReady/Unreachable (one fewer leaves it Suspect, still schedulable)")
	fs.IntVar(&c.SuccessThreshold, "success-threshold", c.SuccessThreshold, "good probes in a row before a NotReady/Unreachable member is Ready again")
	fs.DurationVar(&c.CapacityInterval, "capacity-interval", c.CapacityInterval, "how often member Nodes and Pods are read for capacity")
	fs.DurationVar(&c.NoExecuteAfter, "no-execute-after", c.NoExecuteAfter, "default cluster taint policy: a member NotReady/Unreachable this long is also tainted NoExecute, which moves workloads that do not tolerate it; it arrives this long after detection (0: never taint NoExecute)")
	fs.DurationVar(&c.SnapshotInterval, "snapshot-interval", c.SnapshotInterval, "how often every member's health is published as one snapshot, for consumers that resync (0: off)")
	fs.StringVar(&c.TaintPolicyFile, "taint-policy", c.TaintPolicyFile, "file of Karmada ClusterTaintPolicy YAML (policy.karmada.io/v1alpha1, plus Flotilla's spec.addAfterSeconds) replacing the default taint policy and --no-execute-after; see docs/failover.md")
}
