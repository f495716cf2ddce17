//go:build !linux

package bench

import "os"

// maxRSS is not known off Linux (the units of rusage differ).
func maxRSS(*os.ProcessState) float64 { return 0 }
