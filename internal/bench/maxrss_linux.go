package bench

import (
	"os"
	"syscall"
)

// maxRSS is an exited process's peak resident memory in bytes (Linux
// counts it in KiB).
func maxRSS(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) * 1024
	}
	return 0
}
