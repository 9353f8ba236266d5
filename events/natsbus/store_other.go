//go:build !unix

package natsbus

// freeStore: not read here; jetStreamStore then gives the streams' caps.
func freeStore(string) (int64, bool) { return 0, false }
