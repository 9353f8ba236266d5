package natsbus_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

// TestTLSServerRefusesClientsWithoutItsCA runs an embedded server with a
// generated CA and certificate: a client that does not hold the CA is
// refused with an error saying to give it; one that does connects, by the
// tls:// URL the server gives or by nats://.
func TestTLSServerRefusesClientsWithoutItsCA(t *testing.T) {
	dir := t.TempDir()
	files, err := natsbus.LoadOrCreateTLS(filepath.Join(dir, "tls"), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := natsbus.StartEmbedded("127.0.0.1:0", filepath.Join(dir, "jetstream"), nil, natsbus.WithTLS(files))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	if !strings.HasPrefix(srv.URL(), "tls://") {
		t.Errorf("URL %s, want tls://", srv.URL())
	}
	other, err := natsbus.LoadOrCreateTLS(filepath.Join(dir, "other"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		url     string
		ca      string
		wantErr string // "" when the connection must succeed
	}{
		{"a client without the CA is refused and told to give --tls-ca", srv.URL(), "", "give --tls-ca"},
		{"a client dialing nats:// without the CA is refused as well", strings.Replace(srv.URL(), "tls://", "nats://", 1), "", "give --tls-ca"},
		{"a client holding another CA is refused", srv.URL(), other.CA, "give --tls-ca"},
		{"a client with the CA connects by the tls:// URL", srv.URL(), files.CA, ""},
		{"a client with the CA connects by a nats:// URL", strings.Replace(srv.URL(), "tls://", "nats://", 1), files.CA, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus, err := natsbus.Connect(context.Background(), tc.url, natsbus.Options{Name: "tls-test", TLSCA: tc.ca, ConnectTimeout: 2 * time.Second})
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				defer bus.Close()
				if !bus.Connected() {
					got = "not connected"
				}
			}
			if tc.wantErr == "" {
				if diff := cmp.Diff("", got); diff != "" {
					t.Errorf("connect (-want +got):\n%s", diff)
				}
				return
			}
			if !strings.Contains(got, tc.wantErr) {
				t.Errorf("connect: %q, want an error containing %q", got, tc.wantErr)
			}
		})
	}
}

// TestLoadOrCreateTLSKeepsTheCAItMadeFirst: a second start finds the
// files of the first, so clients holding the CA keep trusting the server.
func TestLoadOrCreateTLSKeepsTheCAItMadeFirst(t *testing.T) {
	dir := t.TempDir()
	first, err := natsbus.LoadOrCreateTLS(dir, []string{"flotilla.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := natsbus.LoadOrCreateTLS(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("files (-first +second):\n%s", diff)
	}
}
