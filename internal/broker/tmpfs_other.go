//go:build !linux

package broker

import "os"

// isTmpfs reports whether dir is on a tmpfs: never known here, so the
// server's batches stay where it puts them.
func isTmpfs(string) bool { return false }

// lockDir is never called where isTmpfs is never true.
func lockDir(string) (*os.File, bool) { return nil, false }
