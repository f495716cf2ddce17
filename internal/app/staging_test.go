package app_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// stagingLink is where the embedded server under data stages bucket's
// atomic batches.
func stagingLink(data, bucket string) string {
	return filepath.Join(data, "jetstream", "jetstream", "$G", "streams", "KV_"+bucket, "batches")
}

// haveTmpfs skips the test where /dev/shm is no tmpfs.
func haveTmpfs(t *testing.T) {
	t.Helper()
	var st syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &st) != nil || st.Type != 0x01021994 {
		t.Skip("no tmpfs at /dev/shm")
	}
}

// The group-committed buckets stage their batches in memory while the
// server runs (internal/broker's staging.go), and a stop leaves the data
// directory as the server had it.
func TestGroupCommittedBucketsStageInMemory(t *testing.T) {
	haveTmpfs(t)
	s := servertest.Start(t)
	api := s.API(t)
	if code, body := api.Do("POST", "/v1/requests", "dev-programmer", refund(1)); code != 201 {
		t.Fatalf("submit: %d %s", code, body)
	}
	var mems []string
	for _, bucket := range []string{"requests", "idempotency"} {
		mem, err := os.Readlink(stagingLink(s.Dir, bucket))
		if err != nil || filepath.Dir(mem) != "/dev/shm" {
			t.Fatalf("%s: batches link to %q (%v); want a directory in /dev/shm", bucket, mem, err)
		}
		mems = append(mems, mem)
	}
	s.Stop()
	for _, mem := range mems {
		if _, err := os.Stat(mem); !os.IsNotExist(err) {
			t.Errorf("%s after stop: %v; want it removed", mem, err)
		}
	}
	if _, err := os.Lstat(stagingLink(s.Dir, "requests")); !os.IsNotExist(err) {
		t.Errorf("batches link after stop: %v; want it removed", err)
	}
}
