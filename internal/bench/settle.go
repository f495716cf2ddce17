package bench

import (
	"runtime"
	"time"
)

// Settle readies the process and the machine for the next measured run,
// so that it does not pay for the one before: the last run's server has
// stopped and its directory is removed, but its garbage is still on the
// heap and the kernel is still writing back and freeing its files. Settle
// collects the garbage, syncs the file systems (where the OS can) and
// waits a moment for what that leaves in the background.
func Settle() {
	runtime.GC()
	syncDisks()
	time.Sleep(settlePause)
}

// settlePause is how long Settle waits after the sync.
const settlePause = 500 * time.Millisecond
