//go:build cluster

package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

const deployDir = "../../../deploy/nats"

// natsCluster is deploy/nats's three-node cluster on loopback.
type natsCluster struct {
	nodes    []*testutil.NATSProcess
	password string
}

// startCluster runs deploy/nats's nats-1..3.conf as three nats-server
// processes. Only what must differ on one machine is changed, in a copy of
// common.conf per node: the client, route and monitoring listeners move to
// free loopback ports, the routes point at them, and store_dir moves to a
// temporary directory. Every other setting (sync_interval: always first of
// all) is deploy's.
func startCluster(t *testing.T) *natsCluster {
	t.Helper()
	common := readDeploy(t, "common.conf")
	if !hasSetting(common, "sync_interval: always") {
		t.Fatal("deploy/nats/common.conf does not set sync_interval: always")
	}
	const n = 3
	var client, route, mon [n]int
	for i := range n {
		client[i], route[i], mon[i] = testutil.FreeLoopbackPort(t), testutil.FreeLoopbackPort(t), testutil.FreeLoopbackPort(t)
	}
	c := &natsCluster{password: randomHex(t)}
	issuer := calloutIssuer(t)
	root := t.TempDir()
	for i := range n {
		name := fmt.Sprintf("nats-%d", i+1)
		dir := filepath.Join(root, name)
		repl := [][2]string{
			{"listen: 0.0.0.0:4222", fmt.Sprintf("listen: 127.0.0.1:%d", client[i])},
			{"http: 0.0.0.0:8222", fmt.Sprintf("http: 127.0.0.1:%d", mon[i])},
			{"listen: 0.0.0.0:6222", fmt.Sprintf("listen: 127.0.0.1:%d", route[i])},
			{`store_dir: "/var/lib/nats"`, fmt.Sprintf("store_dir: %q", filepath.Join(dir, "store"))},
		}
		for j := range n {
			repl = append(repl, [2]string{fmt.Sprintf("nats-route://nats-%d:6222", j+1), fmt.Sprintf("nats-route://127.0.0.1:%d", route[j])})
		}
		writeFile(t, filepath.Join(dir, "common.conf"), substitute(t, common, repl))
		node := readDeploy(t, name+".conf")
		if !strings.Contains(node, "include ./common.conf") {
			t.Fatalf("deploy/nats/%s.conf no longer includes ./common.conf", name)
		}
		conf := filepath.Join(dir, name+".conf")
		writeFile(t, conf, node)
		c.nodes = append(c.nodes, testutil.StartNATSProcess(t, name, natsBin, conf, client[i], mon[i],
			"COUNTERSIGN_NATS_PASSWORD="+c.password, "COUNTERSIGN_CALLOUT_ISSUER="+issuer))
	}
	for _, node := range c.nodes {
		node.WaitHealthy(t, 60*time.Second)
		checkSyncAlways(t, node)
	}
	return c
}

// URL is countersign's nats_url: all three nodes, with its user.
func (c *natsCluster) URL() string {
	urls := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		urls[i] = n.URL("countersign", c.password)
	}
	return strings.Join(urls, ",")
}

// node returns the node called name (a server_name).
func (c *natsCluster) node(t *testing.T, name string) *testutil.NATSProcess {
	for _, n := range c.nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no node %q", name)
	return nil
}

// connect opens a connection as countersign's own NATS user.
func (c *natsCluster) connect(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(c.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// leaderOf is the server_name of the node leading stream, retried while
// the cluster elects.
func leaderOf(t *testing.T, js jetstream.JetStream, stream string) string {
	t.Helper()
	var leader string
	testutil.Eventually(t, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return false
		}
		if info := s.CachedInfo(); info.Cluster != nil {
			leader = info.Cluster.Leader
		}
		return leader != ""
	}, "a leader for "+stream)
	return leader
}

func readDeploy(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hasSetting reports whether a line of conf, outside comments, is setting.
func hasSetting(conf, setting string) bool {
	for _, line := range strings.Split(conf, "\n") {
		if strings.TrimSpace(line) == setting {
			return true
		}
	}
	return false
}

// substitute replaces each old string, which must occur exactly once, so
// that a change to deploy's config shape fails here instead of silently
// running something else.
func substitute(t *testing.T, s string, repl [][2]string) string {
	t.Helper()
	for _, r := range repl {
		if n := strings.Count(s, r[0]); n != 1 {
			t.Fatalf("deploy/nats/common.conf holds %q %d times, want once: update the cluster test", r[0], n)
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	return s
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func randomHex(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// checkSyncAlways reads the running node's JetStream settings from /varz.
func checkSyncAlways(t *testing.T, n *testutil.NATSProcess) {
	t.Helper()
	resp, err := http.Get(n.MonitorURL() + "/varz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		JetStream struct {
			Config struct {
				SyncAlways bool `json:"sync_always"`
			} `json:"config"`
		} `json:"jetstream"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if !v.JetStream.Config.SyncAlways {
		t.Fatalf("%s runs without sync_always", n.Name)
	}
}

// csProcess is one countersign process (`countersign serve --roles R`).
type csProcess struct {
	*testutil.Process
	addr string // HTTP address; "" without the api role
}

// startCountersign runs the built binary with the demo tenant against the
// cluster, in one role.
func startCountersign(t *testing.T, c *natsCluster, name, role string) *csProcess {
	t.Helper() // the demo tenant, its quotas lifted: the load submits from one token
	return startCountersignWith(t, c, name, role, fmt.Sprintf("request_shards: %d\n", *shards)+testutil.Unthrottled(config.DemoYAML))
}

// startCountersignWith runs the built binary with config yaml against the
// cluster, in roles role (comma-separated).
func startCountersignWith(t *testing.T, c *natsCluster, name, role, yaml string) *csProcess {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "countersign.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &csProcess{}
	args := []string{"serve", "--nats-url", c.URL(), "--roles", role, "--data", filepath.Join(dir, "data")}
	if strings.Contains(role, "api") {
		p.addr = fmt.Sprintf("127.0.0.1:%d", testutil.FreeLoopbackPort(t))
		args = append(args, "--listen", p.addr)
	}
	p.Process = &testutil.Process{Name: name, Bin: countersignBin, Args: args, Dir: dir}
	p.Ready = p.readyAfter(0)
	testutil.StartProcess(t, p.Process)
	return p
}

// restart starts a killed process again and waits until it is ready.
func (p *csProcess) restart() {
	p.Ready = p.readyAfter(p.startedCount())
	p.Start()
}

// readyAfter: an api process answers /readyz; a deciders process has
// logged that it runs (its start returns once its mirrors have replayed)
// more often than before.
func (p *csProcess) readyAfter(starts int) func() bool {
	if p.addr != "" {
		return func() bool {
			resp, err := http.Get("http://" + p.addr + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}
	}
	return func() bool { return p.startedCount() > starts }
}

func (p *csProcess) startedCount() int {
	b, _ := os.ReadFile(p.LogPath)
	return bytes.Count(b, []byte("running without the api role"))
}

// calloutIssuer is the public key of a fresh account nkey, for deploy's
// auth_callout block (countersign's own user bypasses the callout, so the
// processes here need no seed).
func calloutIssuer(t *testing.T) string {
	t.Helper()
	kp, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub
}
