package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUpStartsItsOwnNATSUnlessNATSURLIsOnItsCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want bool
	}{
		{"no URL anywhere", "", []string{"--data-dir", "d"}, true},
		{"an exported FLOTILLA_NATS_URL only tells the CLI where to connect", "nats://127.0.0.1:14221,nats://127.0.0.1:14222", []string{"--data-dir", "d"}, true},
		{"--nats-url on the command line", "", []string{"--nats-url", "nats://127.0.0.1:14221,nats://127.0.0.1:14222"}, false},
		{"--nats-url on the command line with the variable set too", "nats://127.0.0.1:4222", []string{"--nats-url", "nats://127.0.0.1:14221"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FLOTILLA_NATS_URL", tc.env)
			up, _, err := newRoot().Find([]string{"up"})
			if err != nil {
				t.Fatal(err)
			}
			if err := up.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, embedded(up)); diff != "" {
				t.Errorf("embedded (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEveryDaemonAndUpTakeStreamReplicas(t *testing.T) {
	for _, name := range []string{"up", "policyd", "schedulerd", "healthd", "executord"} {
		t.Run(name, func(t *testing.T) {
			c, _, err := newRoot().Find([]string{name})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.ParseFlags([]string{"--stream-replicas", "3"}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("3", c.Flags().Lookup("stream-replicas").Value.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
