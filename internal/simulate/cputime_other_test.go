//go:build !unix

package simulate

import "time"

func cpuTime() time.Duration { return 0 }
