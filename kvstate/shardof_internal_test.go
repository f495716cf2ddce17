package kvstate

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/countersign/countersign/domain"
)

// TestShardOfIsFNV1a: the shard is FNV-1a (32 bits) of the tenant id
// modulo K, as documented: hash/fnv's answer, without its allocation.
func TestShardOfIsFNV1a(t *testing.T) {
	for n := range 200 {
		tenant := fmt.Sprint("tenant-", n)
		h := fnv.New32a()
		_, _ = h.Write([]byte(tenant))
		for _, k := range []int{2, 3, 7, 64} {
			if got, want := ShardOf(domain.TenantID(tenant), k), int(h.Sum32()%uint32(k)); got != want {
				t.Fatalf("ShardOf(%s, %d) = %d, want %d", tenant, k, got, want)
			}
		}
	}
	var sink int
	if n := testing.AllocsPerRun(100, func() { sink += ShardOf("acme", 3) }); n != 0 {
		t.Errorf("ShardOf allocates %v times", n)
	}
	_ = sink
}
