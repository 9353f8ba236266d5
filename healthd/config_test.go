package healthd

import (
	"strings"
	"testing"
	"time"
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
