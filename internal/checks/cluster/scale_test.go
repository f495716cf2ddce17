//go:build cluster

package cluster

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

var (
	scaleShards  = flag.String("cluster.scale", "", "TestClusterShardScaling: the request_shards to measure, comma-separated (e.g. 1,3); empty skips it")
	scaleTenants = flag.Int("cluster.scale-tenants", 3, "TestClusterShardScaling: tenants the load spreads over")
)

// TestClusterShardScaling measures acknowledged submits per second on the
// three-node cluster for each request_shards given by -cluster.scale:
// three countersign processes (api and deciders), the load spread over
// -cluster.scale-tenants tenants, each tenant's calls decided in their
// submit by its read rule (a request write and its outbox work, no
// person), for -cluster.duration. It asserts nothing of the figures: they
// are the machine's (docs/operators/operations.md, "Sizing").
func TestClusterShardScaling(t *testing.T) {
	if *scaleShards == "" {
		t.Skip("-cluster.scale not set")
	}
	tenants := make([]string, *scaleTenants)
	for i := range tenants {
		tenants[i] = fmt.Sprintf("d%d", i)
	}
	for _, s := range strings.Split(*scaleShards, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("-cluster.scale: %v", err)
		}
		t.Run(fmt.Sprintf("K=%d", k), func(t *testing.T) { measureShards(t, k, tenants) })
	}
}

// tenantsYAML is the demo tenant once per id, its tokens prefixed with
// the id instead of dev, its quotas lifted.
func tenantsYAML(ids []string) string {
	var b strings.Builder
	b.WriteString("tenants:\n")
	for _, id := range ids {
		one := strings.TrimPrefix(config.DemoYAML, "tenants:\n")
		one = strings.Replace(one, "id: demo", "id: "+id, 1)
		b.WriteString(strings.ReplaceAll(one, "token: dev-", "token: "+id+"-"))
	}
	return testutil.Unthrottled(b.String())
}

func measureShards(t *testing.T, k int, tenants []string) {
	c := startCluster(t)
	_, js := c.connect(t)
	yaml := fmt.Sprintf("request_shards: %d\n", k) + tenantsYAML(tenants)
	var addrs []string
	for i := range 3 {
		addrs = append(addrs, startCountersignWith(t, c, fmt.Sprintf("cs-%d", i), "api,deciders", yaml).addr)
	}
	var leaders []string
	for i := range k {
		stream := kvstate.StreamOf(kvstate.RequestBucket(i))
		leaders = append(leaders, stream+"@"+leaderOf(t, js, stream))
	}
	sort.Strings(leaders)
	var byShard []string
	for _, id := range tenants {
		byShard = append(byShard, fmt.Sprintf("%s→%d", id, kvstate.ShardOf(domain.TenantID(id), k)))
	}

	workers := *loadWorkers * len(tenants)
	var stop atomic.Bool
	var acked, failed atomic.Int64
	var codes sync.Map // status code → count, of the submits not acknowledged
	var wg sync.WaitGroup
	began := time.Now()
	for w := range workers {
		tenant := tenants[w%len(tenants)]
		cl := newClient(addrs[w%len(addrs)], tenant+"-sub")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				var r record
				code := cl.do("POST", "/v1/requests", call("read_ledger", rand.IntN(1_000_000_000), "5m"), nil, &r)
				if code == 201 && r.Status == "approved" {
					acked.Add(1)
				} else {
					failed.Add(1)
					n, _ := codes.LoadOrStore(fmt.Sprint(code, " ", r.Status, r.Error), new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				}
			}
		}()
	}
	time.Sleep(*loadDuration)
	stop.Store(true)
	wg.Wait()
	ran := time.Since(began)
	var notAcked []string
	codes.Range(func(k, v any) bool {
		notAcked = append(notAcked, fmt.Sprintf("%s ×%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	t.Logf("not acknowledged: %v", notAcked)
	if acked.Load() == 0 {
		t.Fatalf("no submit acknowledged (%d failed)", failed.Load())
	}
	t.Logf("request_shards %d, tenants %v, %d agents: %d submits acknowledged in %v: %.0f/s (%d not); shard leaders %v",
		k, byShard, workers, acked.Load(), ran.Round(time.Millisecond), float64(acked.Load())/ran.Seconds(), failed.Load(), leaders)
}
