package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUpRefusesADataDirOrAddressAnotherUpHolds(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	pid := strconv.Itoa(os.Getpid())
	dir := t.TempDir()
	first, err := holdUp(dir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, err = holdUp(dir, "")
	want := "--data-dir " + dir + " is held by another flotilla up (PID " + pid + "): stop it first (make demo-down stops the demo's; or kill " + pid + ")"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("a second up on the same data dir: got %v, want %q...", err, want)
	}
	first.release()
	again, err := holdUp(dir, "")
	if err != nil {
		t.Fatalf("the data dir released is free again: %v", err)
	}
	again.release()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	_, err = holdUp(t.TempDir(), addr)
	if err == nil || err.Error() != "--listen "+addr+" is held by another process: stop it first (make demo-down stops the demo's), or give another --listen and --data-dir" {
		t.Errorf("an address in use: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(listenNote(addr)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(listenNote(addr), []byte(pid), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = holdUp(t.TempDir(), addr)
	if err == nil || !strings.Contains(err.Error(), "is held by another flotilla up (PID "+pid+")") {
		t.Errorf("an address another up noted: %v", err)
	}
}

func TestUpNamesWhatIsWrongWithAListenAddressNoOneHolds(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, tc := range []struct{ listen, want string }{
		{"garbage", "--listen garbage: listen tcp: address garbage: missing port in address"},
		{"127.0.0.1:99999", "--listen 127.0.0.1:99999: listen tcp: address 99999: invalid port"},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			l, err := holdUp(t.TempDir(), tc.listen)
			if err == nil {
				l.release()
				t.Fatal("up took the address")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
