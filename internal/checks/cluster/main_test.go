//go:build cluster

package cluster

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
)

var (
	loadDuration = flag.Duration("cluster.duration", 15*time.Second, "how long TestClusterUnderFaults drives load (longer for a soak)")
	loadWorkers  = flag.Int("cluster.workers", 6, "agents submitting at once in TestClusterUnderFaults")
	shards       = flag.Int("cluster.shards", 3, "request_shards of the countersign processes")
)

// The binaries every test runs as processes, built once per run.
var natsBin, countersignBin string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "countersign-cluster-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if natsBin, err = testutil.BuildNATSServer(dir); err == nil {
		countersignBin, err = testutil.GoBuild(dir, "countersign", "github.com/countersign/countersign/cmd/countersign")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
