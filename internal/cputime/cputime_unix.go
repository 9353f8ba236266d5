//go:build unix

// Package cputime reads the CPU time this process has used, for benchmarks
// that report it next to wall time (cpu-ns/op): on a busy machine it
// measures the work better than wall time does.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user + system) this process has used; 0 when
// the system cannot tell.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
