//go:build unix

package natsbus

import (
	"os"
	"syscall"
)

// freeStore is what nats-server takes as its JetStream storage limit when
// given none: three quarters of the disk free under dir (ok false when
// that cannot be read).
func freeStore(dir string) (int64, bool) {
	var fs syscall.Statfs_t
	if os.MkdirAll(dir, 0o700) != nil || syscall.Statfs(dir, &fs) != nil {
		return 0, false
	}
	return int64(uint64(fs.Bavail) * uint64(fs.Bsize) / 4 * 3), true
}
