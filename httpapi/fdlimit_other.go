//go:build !unix

package httpapi

// openFileLimit is unknown here.
func openFileLimit() int { return 0 }
