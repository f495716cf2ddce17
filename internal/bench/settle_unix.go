//go:build unix

package bench

import "syscall"

// syncDisks has the kernel write back every file system's dirty data.
func syncDisks() { syscall.Sync() }
