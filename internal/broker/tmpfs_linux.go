package broker

import (
	"os"
	"syscall"
)

// tmpfsMagic is Linux's TMPFS_MAGIC (statfs(2)).
const tmpfsMagic = 0x01021994

// isTmpfs reports whether dir is on a tmpfs.
func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}

// lockDir takes dir's exclusive lock (flock(2)) without waiting; it is
// held until the returned file is closed, or the process ends.
func lockDir(dir string) (*os.File, bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
}
