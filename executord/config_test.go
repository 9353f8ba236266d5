package executord

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestRegisterFlagsWritesEachFlagIntoTheConfig(t *testing.T) {
	got := DefaultConfig()
	fs := pflag.NewFlagSet("executord", pflag.ContinueOnError)
	got.RegisterFlags(fs)
	got.RegisterPullFlags(fs)
	if err := fs.Parse([]string{"--kube-api-qps", "9", "--kube-api-burst", "10", "--resync-interval", "11s", "--cluster", "m1", "--kubeconfig", "k"}); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.KubeAPIQPS, want.KubeAPIBurst, want.ResyncInterval, want.Cluster, want.Kubeconfig = 9, 10, 11*time.Second, "m1", "k"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}
