package httpapi

import "testing"

// The connection bound never outgrows the open-file limit, so the spare
// connections for /healthz always have file descriptors.
func TestConnBound(t *testing.T) {
	for _, tc := range []struct{ configured, files, want int }{
		{0, 0, 101_000},
		{0, 1_048_576, 101_000},
		{5000, 0, 5000},
		{5000, 4096, 4096 - 409 - SpareConnections},
		{0, 20_000, 20_000 - 2000 - SpareConnections},
		{10, 20, 1},
	} {
		if got := connBound(tc.configured, tc.files); got != tc.want {
			t.Errorf("connBound(%d, %d) = %d, want %d", tc.configured, tc.files, got, tc.want)
		}
	}
}
