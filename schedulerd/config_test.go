package schedulerd

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestRegisterFlagsWritesEachFlagIntoTheConfig(t *testing.T) {
	got := DefaultConfig()
	fs := pflag.NewFlagSet("schedulerd", pflag.ContinueOnError)
	got.RegisterFlags(fs)
	if err := fs.Parse([]string{"--eviction-rate", "2.5", "--eviction-burst", "7", "--failover-tick", "1s"}); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Evictions, want.FailoverTick = EvictionLimit{PerSecond: 2.5, Burst: 7}, time.Second
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}
