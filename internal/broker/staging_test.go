package broker

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// needTmpfs skips where the machine has no tmpfs to stage batches in.
func needTmpfs(t *testing.T) string {
	t.Helper()
	root := tmpfsRoot()
	if root == "" {
		t.Skip("no tmpfs among", stagingRoots())
	}
	return root
}

// atomicStream starts an embedded server in dir and makes stream S, which
// takes atomic batches on s.>.
func atomicStream(t *testing.T, dir string) *Broker {
	t.Helper()
	b, err := Start(context.Background(), Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.JS.CreateStream(context.Background(), jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, AllowAtomicPublish: true}); err != nil {
		b.Close()
		t.Fatal(err)
	}
	return b
}

// stageBatch publishes messages from..to of atomic batch id on S, the last
// one committing when commit, and returns the acknowledgement's count (0
// when it does not commit).
func stageBatch(t *testing.T, nc *nats.Conn, id string, from, to int, commit bool) int {
	t.Helper()
	for i := from; i <= to; i++ {
		m := nats.NewMsg("s." + id + "." + strconv.Itoa(i))
		m.Data = []byte("a write")
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i))
		if i < to || !commit {
			if err := nc.PublishMsg(m); err != nil {
				t.Fatal(err)
			}
			continue
		}
		m.Header.Set("Nats-Batch-Commit", "1")
		resp, err := nc.RequestMsg(m, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var ack struct {
			Count int             `json:"count"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(resp.Data, &ack); err != nil || ack.Error != nil {
			t.Fatalf("commit: %s (%v)", resp.Data, err)
		}
		return ack.Count
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return 0
}

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// eventually waits for cond, failing with what after 10 s.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not within 10s: " + what)
		}
	}
}

// The server stages a batch in the memory directory, applies it to the
// stream, and removes it; Close removes the link and the directory.
func TestBatchesStageInMemory(t *testing.T) {
	root := needTmpfs(t)
	b := atomicStream(t, t.TempDir())
	defer b.Close()
	got, err := b.StageBatchesInMemory("S")
	if err != nil || got != root {
		t.Fatalf("StageBatchesInMemory = %q, %v; want %q", got, err, root)
	}
	link := filepath.Join(b.Server.JetStreamConfig().StoreDir, "$G", "streams", "S", batchesDir)
	mem, err := os.Readlink(link)
	if err != nil || filepath.Dir(mem) != root || !strings.HasPrefix(filepath.Base(mem), stagingPrefix) {
		t.Fatalf("%s links to %q (%v); want a directory of %s", link, mem, err, root)
	}
	if fi, err := os.Stat(mem); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("memory directory: %v, %v; want mode 0700", fi, err)
	}

	stageBatch(t, b.Conn, "one", 1, 2, false)
	eventually(t, func() bool { return len(entries(t, mem)) == 1 }, "the open batch staged in memory")
	if n := stageBatch(t, b.Conn, "one", 3, 3, true); n != 3 {
		t.Fatalf("batch of 3 acknowledged as %d", n)
	}
	eventually(t, func() bool { return len(entries(t, mem)) == 0 }, "the committed batch's staging removed")
	st, err := b.JS.Stream(context.Background(), "S")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(context.Background()); err != nil || info.State.Msgs != 3 {
		t.Fatalf("stream after the batch: %+v, %v; want 3 messages", info, err)
	}

	b.Close()
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("link after Close: %v; want it gone", err)
	}
	if _, err := os.Stat(mem); !os.IsNotExist(err) {
		t.Errorf("memory directory after Close: %v; want it gone", err)
	}
}

// A process that dies leaves its link and memory directory, unlocked: the
// next start on the same data removes it once the server is up, and
// stages in a directory of its own.
func TestStagingLeftByADeadProcessIsRemoved(t *testing.T) {
	needTmpfs(t)
	dir := t.TempDir()
	b := atomicStream(t, dir)
	if _, err := b.StageBatchesInMemory("S"); err != nil {
		t.Fatal(err)
	}
	old := b.staged[0].dir
	stageBatch(t, b.Conn, "open", 1, 2, false) // never committed
	eventually(t, func() bool { return len(entries(t, old)) == 1 }, "the open batch staged")
	// Dies: the server stops, its locks go, nothing of Close runs.
	b.Conn.Close()
	b.Server.Shutdown()
	b.Server.WaitForShutdown()
	b.staged[0].lock.Close()

	b = atomicStream(t, dir)
	defer b.Close()
	if _, err := b.StageBatchesInMemory("S"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the dead process's staging %s: %v; want it removed", old, err)
	}
	if mem, err := os.Readlink(filepath.Join(b.Server.JetStreamConfig().StoreDir, "$G", "streams", "S", batchesDir)); err != nil || mem == old {
		t.Fatalf("link after restart = %q, %v; want a new directory", mem, err)
	}
	if n := stageBatch(t, b.Conn, "next", 1, 4, true); n != 4 {
		t.Fatalf("batch after restart acknowledged as %d", n)
	}
}

// Without a tmpfs, batches stay where the server puts them, and commit.
func TestNoTmpfsLeavesBatchesOnDisk(t *testing.T) {
	disk := t.TempDir()
	if isTmpfs(disk) {
		t.Skip("the temp dir is a tmpfs")
	}
	roots := stagingRoots
	stagingRoots = func() []string { return []string{disk, ""} }
	defer func() { stagingRoots = roots }()
	b := atomicStream(t, t.TempDir())
	defer b.Close()
	if got, err := b.StageBatchesInMemory("S"); got != "" || err != nil {
		t.Fatalf("StageBatchesInMemory = %q, %v; want nothing staged", got, err)
	}
	if n := stageBatch(t, b.Conn, "disk", 1, 5, true); n != 5 {
		t.Fatalf("batch acknowledged as %d", n)
	}
	if len(entries(t, disk)) != 0 {
		t.Fatalf("something was made in %s: %v", disk, entries(t, disk))
	}
}

// A stream that is not there is named in the error; the others stage.
func TestStagingNamesAMissingStream(t *testing.T) {
	needTmpfs(t)
	b := atomicStream(t, t.TempDir())
	defer b.Close()
	root, err := b.StageBatchesInMemory("NOPE", "S")
	if err == nil || !strings.Contains(err.Error(), "NOPE") || root == "" || len(b.staged) != 1 {
		t.Fatalf("StageBatchesInMemory = %q, %v (%d staged); want S staged and NOPE named", root, err, len(b.staged))
	}
}

// A start removes the staging directories no process holds, and leaves
// those of live processes.
func TestStagingSweepsOnlyTheDead(t *testing.T) {
	root := needTmpfs(t)
	dead, err := os.MkdirTemp(root, stagingPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dead)
	live, lock, err := lockedDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { os.RemoveAll(live); lock.Close() }()
	if !strings.HasPrefix(filepath.Base(live), stagingPrefix) {
		t.Fatalf("lockedDir made %s", live)
	}
	b := atomicStream(t, t.TempDir())
	defer b.Close()
	if _, err := b.StageBatchesInMemory("S"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("unlocked %s: %v; want it removed", dead, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("locked %s: %v; want it kept", live, err)
	}
}

// A store on a tmpfs syncs for nothing (kvstate's committer then goes
// singly); one on a disk does not, nor does an external cluster's.
func TestSyncsFreeOnlyOnATmpfsStore(t *testing.T) {
	root := needTmpfs(t)
	mem, err := os.MkdirTemp(root, "syncsfree-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(mem) })
	for _, c := range []struct {
		dir  string
		want bool
	}{{mem, true}, {t.TempDir(), isTmpfs(os.TempDir())}} {
		b, err := Start(context.Background(), Config{DataDir: c.dir})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.SyncsFree(); got != c.want {
			t.Errorf("store in %s: SyncsFree %v, want %v", c.dir, got, c.want)
		}
		b.Close()
	}
	if (&Broker{}).SyncsFree() {
		t.Error("an external cluster's broker says its syncs are free")
	}
}
