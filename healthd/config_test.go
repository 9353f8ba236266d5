package healthd

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestDetectionIsFailureThresholdProbeIntervalsPlusATimeout(t *testing.T) {
	cases := []struct {
		name              string
		interval, timeout time.Duration
		threshold         int
		want              time.Duration
	}{
		{"the defaults detect a lost member within 8s", 2 * time.Second, 2 * time.Second, 3, 8 * time.Second},
		{"a timeout below the interval is paid once", 10 * time.Second, 5 * time.Second, 3, 35 * time.Second},
		{"a timeout above the interval delays every probe", time.Second, 2 * time.Second, 3, 7 * time.Second},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.ProbeInterval, cfg.ProbeTimeout, cfg.FailureThreshold = c.interval, c.timeout, c.threshold
		if got := cfg.Detection(); got != c.want {
			t.Errorf("%s: want %v, got %v", c.name, c.want, got)
		}
	}
	if d := DefaultConfig(); d.NoExecuteAfter != 300*time.Second || d.SnapshotInterval != 30*time.Second {
		t.Errorf("NoExecute after 300s and a snapshot every 30s by default: %+v", d)
	}
}

func TestValidateNamesEveryBadField(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CredentialsKey = "k"
	if err := cfg.Validate(); err != nil {
		t.Fatalf("defaults with a key file are valid: %v", err)
	}
	cfg.SnapshotInterval, cfg.NoExecuteAfter = 0, 0
	if err := cfg.Validate(); err != nil {
		t.Fatalf("0 switches snapshots and NoExecute off: %v", err)
	}
	cfg.SnapshotInterval, cfg.NoExecuteAfter, cfg.FailureThreshold, cfg.SuccessThreshold = -1, -1, 0, 0
	err := cfg.Validate()
	for _, field := range []string{"snapshot-interval", "no-execute-after", "failure-threshold", "success-threshold"} {
		if err == nil || !strings.Contains(err.Error(), field+":") {
			t.Errorf("want an error naming %s, got %v", field, err)
		}
	}
}

func TestRegisterFlagsWritesEachFlagIntoTheConfig(t *testing.T) {
	got := DefaultConfig()
	fs := pflag.NewFlagSet("healthd", pflag.ContinueOnError)
	got.RegisterFlags(fs)
	if err := fs.Parse([]string{"--probe-interval", "1s", "--probe-timeout", "3s", "--failure-threshold", "4", "--success-threshold", "5", "--capacity-interval", "6s", "--no-execute-after", "7s", "--snapshot-interval", "8s", "--taint-policy", "p.yaml"}); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.ProbeInterval, want.ProbeTimeout, want.FailureThreshold, want.SuccessThreshold = time.Second, 3*time.Second, 4, 5
	want.CapacityInterval, want.NoExecuteAfter, want.SnapshotInterval, want.TaintPolicyFile = 6*time.Second, 7*time.Second, 8*time.Second, "p.yaml"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}
