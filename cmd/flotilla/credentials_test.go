package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCommandsFindTheCredentialsRegisteredForTheURLTheyDial(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(credentialsEnv, "")
	reg := func(url, creds string) string {
		t.Helper()
		files, err := register(url, credsExt, []byte(creds))
		if err != nil {
			t.Fatal(err)
		}
		return files[0]
	}
	a, b := reg("nats://127.0.0.1:4222", "a"), reg("nats://127.0.0.1:5222", "b")
	c := reg("nats://127.0.0.1:14221,nats://127.0.0.1:14222,nats://127.0.0.1:14223", "c")
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
		{"a cluster's list registered as a whole", "nats://127.0.0.1:14221,nats://127.0.0.1:14222,nats://127.0.0.1:14223", "", c},
		{"one node of a cluster registered as a list", "nats://127.0.0.1:14223", "", filepath.Join(filepath.Dir(c), "127.0.0.1_14223.creds")},
		{"the list in another order", "nats://127.0.0.1:14222,nats://127.0.0.1:14221", "", filepath.Join(filepath.Dir(c), "127.0.0.1_14222.creds")},
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

// A credential is issued only once its file can be written, and for a
// namespace that can exist; neither check needs the bus.
func TestCredsIssueChecksItsFileAndNamespaceBeforeIssuing(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	unreachable := "nats://127.0.0.1:1"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a file in a directory that does not exist", []string{"creds", "issue", "viewer", "v1", "-o", "/nonexistent/dir/v1.creds"},
			"-o /nonexistent/dir/v1.creds: open /nonexistent/dir/v1.creds.tmp: no such file or directory (nothing was issued)"},
		{"a namespace that is no DNS label", []string{"creds", "issue", "publisher", "p1", "--namespace", "Bad_NS", "-o", filepath.Join(t.TempDir(), "p1.creds")},
			`--namespace "Bad_NS": a lowercase RFC 1123 label must consist of`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, unreachable, tc.args...)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want it to begin %q", err, tc.want)
			}
		})
	}
}
