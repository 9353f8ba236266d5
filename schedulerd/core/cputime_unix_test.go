//go:build unix

package core

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) this process has used: under a
// busy machine it measures the work better than wall time does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
