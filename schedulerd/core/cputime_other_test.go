//go:build !unix

package core

import "time"

func cpuTime() time.Duration { return 0 }
