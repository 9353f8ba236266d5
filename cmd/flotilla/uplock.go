package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// upLock is what one `flotilla up` holds so that a second one refuses to
// start instead of failing half-way with "port in use?": an exclusive lock
// on <data-dir>/up.pid (which names its PID), and a note of its PID per
// listen address under the user's configuration directory.
type upLock struct {
	file *os.File
	note string
}

// holdUp takes dataDir and listen for this process, or says which `flotilla
// up` holds them (its PID) and how to stop it. listen "" (an external NATS)
// takes the data directory alone.
func holdUp(dataDir, listen string) (*upLock, error) {
	path := filepath.Join(dataDir, "up.pid")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid := readPID(path)
		_ = f.Close()
		return nil, fmt.Errorf("--data-dir %s is held by another flotilla up (PID %s): stop it first (make demo-down stops the demo's; or kill %s), "+
			"or use it as it is: the client commands need no flotilla up of their own", dataDir, pid, pid)
	}
	l := &upLock{file: f}
	if listen != "" {
		note := listenNote(listen)
		if ln, err := net.Listen("tcp", listen); err != nil {
			l.release()
			if !errors.Is(err, syscall.EADDRINUSE) { // not an address (host:port), one not on this machine, a port refused...
				return nil, fmt.Errorf("--listen %s: %w", listen, err)
			}
			who := "another process"
			if pid := readPID(note); pid != "?" && alive(pid) {
				who = "another flotilla up (PID " + pid + ")"
			}
			return nil, fmt.Errorf("--listen %s is held by %s: stop it first (make demo-down stops the demo's), or give another --listen and --data-dir", listen, who)
		} else {
			_ = ln.Close()
		}
		if os.MkdirAll(filepath.Dir(note), 0o700) == nil && os.WriteFile(note, []byte(strconv.Itoa(os.Getpid())), 0o600) == nil {
			l.note = note
		}
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return l, nil
}

// release gives the data directory and the address back.
func (l *upLock) release() {
	if l.note != "" && readPID(l.note) == strconv.Itoa(os.Getpid()) {
		_ = os.Remove(l.note)
	}
	_ = l.file.Close()
}

// listenNote is where the PID of the `flotilla up` listening on listen is
// noted.
func listenNote(listen string) string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "flotilla", "up", strings.NewReplacer(":", "_", "/", "_").Replace(listen)+".pid")
}

func readPID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// alive reports whether the process pid runs.
func alive(pid string) bool {
	n, err := strconv.Atoi(pid)
	if err != nil {
		return false
	}
	err = syscall.Kill(n, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
