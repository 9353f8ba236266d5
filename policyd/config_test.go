package policyd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestRegisterFlagsWritesEachFlagIntoTheConfig(t *testing.T) {
	got := DefaultConfig()
	fs := pflag.NewFlagSet("policyd", pflag.ContinueOnError)
	got.RegisterFlags(fs)
	if err := fs.Parse([]string{"--max-replicas", "5"}); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.MaxReplicas = 5
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}
