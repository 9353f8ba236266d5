//go:build !unix

// Package cputime reads the CPU time this process has used, for benchmarks
// that report it next to wall time (cpu-ns/op).
package cputime

import "time"

// Process is 0 where the system cannot tell.
func Process() time.Duration { return 0 }
