package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCommandsFindTheCredentialsRegisteredForTheURLTheyDial(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(credentialsEnv, "")
	a, err := register("nats://127.0.0.1:4222", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := register("nats://127.0.0.1:5222", []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(a); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("registered file %s: %v, %v; want mode 0600", a, info, err)
	}
	cases := []struct {
		name       string
		url, creds string
		want       string
	}{
		{"the registered file of the URL dialed", "nats://127.0.0.1:5222", "", b},
		{"the default port when the URL has none", "nats://127.0.0.1", "", a},
		{"the first URL of a list that has one", "nats://127.0.0.1:6222,nats://127.0.0.1:4222", "", a},
		{"none for a URL nothing registered", "nats://127.0.0.1:7222", "", ""},
		{"--creds over any registration", "nats://127.0.0.1:4222", "/given.creds", "/given.creds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &globals{natsURL: c.url, creds: c.creds}
			if diff := cmp.Diff(c.want, g.credentials()); diff != "" {
				t.Errorf("credentials (-want +got):\n%s", diff)
			}
		})
	}
	if got, want := filepath.Dir(a), filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "flotilla", "credentials"); got != want {
		t.Errorf("registered under %s, want %s", got, want)
	}
}
