//go:build cluster

package cluster

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go/jetstream"
)

// TestClusterReadyzLeaderLost: when the node leading the requests bucket
// is killed, /readyz is 503 naming a bucket without a leader until the
// cluster elects one, then 200 again; it never says ready while writes
// would wait on the election. The node killed is not the meta leader, so
// NATS itself still answers (the 503 is the write probe's, not
// JetStream's).
func TestClusterReadyzLeaderLost(t *testing.T) {
	c := startCluster(t)
	_, js := c.connect(t)
	api := startCountersign(t, c, "api-1", "api")
	url := "http://" + api.addr + "/readyz"
	leader := streamLeaderOffMeta(t, c, js)
	node := c.node(t, leader)
	node.Kill()
	testutil.Eventually(t, 30*time.Second, func() bool {
		code, body := getBody(url)
		return code == http.StatusServiceUnavailable && strings.Contains(body, "bucket ")
	}, "/readyz 503 naming a bucket without a leader after "+leader+" was killed")
	testutil.Eventually(t, 60*time.Second, func() bool {
		code, _ := getBody(url)
		return code == http.StatusOK
	}, "/readyz 200 once the buckets have leaders again")
	node.Start()
	node.WaitHealthy(t, 60*time.Second)
}

// streamLeaderOffMeta moves the requests bucket's leadership off the meta
// leader (stepping it down until it lands elsewhere) and returns its node.
func streamLeaderOffMeta(t *testing.T, c *natsCluster, js jetstream.JetStream) string {
	t.Helper()
	var leader string
	testutil.Eventually(t, 60*time.Second, func() bool {
		leader = leaderOf(t, js, requestsStream)
		if leader != metaLeader(c) {
			return true
		}
		_, _ = js.Conn().Request("$JS.API.STREAM.LEADER.STEPDOWN."+requestsStream, nil, 2*time.Second)
		return false
	}, "the requests bucket led by a node that does not lead the meta group")
	return leader
}

// metaLeader is the meta group's leader as a node's /jsz tells it.
func metaLeader(c *natsCluster) string {
	for _, n := range c.nodes {
		resp, err := http.Get(n.MonitorURL() + "/jsz")
		if err != nil {
			continue
		}
		var jsz struct {
			Meta struct {
				Leader string `json:"leader"`
			} `json:"meta_cluster"`
		}
		err = json.NewDecoder(resp.Body).Decode(&jsz)
		resp.Body.Close()
		if err == nil && jsz.Meta.Leader != "" {
			return jsz.Meta.Leader
		}
	}
	return ""
}

func getBody(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
