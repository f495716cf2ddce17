package audit

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/internal/broker"
	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// childDir, set, makes TestAuditChild the subprocess of
// TestWriterKilledMidBatch.
const childDir = "AUDIT_CHILD_DIR"

// TestAuditChild (a subprocess only) runs JetStream on its data dir, a
// writer, and grants written as fast as they go, printing the log's size
// until it is killed.
func TestAuditChild(t *testing.T) {
	dir := os.Getenv(childDir)
	if dir == "" {
		t.Skip("the subprocess of TestWriterKilledMidBatch")
	}
	b, err := broker.Start(context.Background(), broker.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, b)
	w.noTap = os.Getenv("NOTAP") != "" // NOTAP=1 go test -run TestWriterKilledMidBatch: the same without the tap
	w.runWriter(t, "child-writer")
	go func() {
		for i := 0; ; i++ {
			w.grant(t, "acme", i)
		}
	}()
	for {
		fmt.Printf("size %d\n", w.size(t, "acme"))
		time.Sleep(20 * time.Millisecond)
	}
}

// The writer killed -9 while it writes (with the NATS server it embeds):
// after a restart on the same data, the log holds every grant written
// exactly once, in a chain that verifies.
func TestWriterKilledMidBatch(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAuditChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childDir+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if n, _ := strconv.Atoi(strings.TrimPrefix(sc.Text(), "size ")); n >= 300 {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	b, err := broker.Start(context.Background(), broker.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	w := newWorld(t, b)
	st, err := b.JS.Stream(context.Background(), kvstate.StreamOf(kvstate.BucketGrants))
	if err != nil {
		t.Fatal(err)
	}
	written := int64(st.CachedInfo().State.Msgs)
	before := w.size(t, "acme")
	w.runWriter(t, "writer-after")
	testutil.Eventually(t, 30*time.Second, func() bool { return w.size(t, "acme") >= written }, "the log caught up")
	log := w.export(t, "acme")
	want := map[string]bool{}
	for i := range written {
		want[fmt.Sprintf("grt_A%020d", i)] = true
	}
	chain := checkOnce(t, log, want)
	if int64(chain.Len()) != written || bytes.Count(log, []byte("\n")) != int(written) {
		t.Fatalf("%d entries after the restart (%d before it); want the %d grants written", chain.Len(), before, written)
	}
	t.Logf("killed at %d entries of %d grants; %d after the restart", before, written, chain.Len())
}

// A batch the machine's crash left half-applied, its staged copy gone
// (the stream ends with entries and tree messages, not their cursor):
// once DropPartialBatch has removed it, the writer stores those grants
// again, each once, in a chain that verifies.
func TestPartialBatchIsDropped(t *testing.T) {
	b := testutil.NewJetStream(t)
	w := newWorld(t, b)
	ctx := context.Background()
	stop := w.runWriter(t, "writer")
	for i := range 20 {
		w.grant(t, "acme", i)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return w.size(t, "acme") == 20 }, "first batches stored")
	for i := 20; i < 40; i++ {
		w.grant(t, "acme", i)
	}
	testutil.Eventually(t, 20*time.Second, func() bool { return w.size(t, "acme") == 40 }, "last batch stored")
	stop()

	// The crash: the last batch's cursor, its last message, never landed.
	st, err := b.JS.Stream(ctx, Stream)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := st.GetLastMsgForSubject(ctx, ">")
	if err != nil || cur.Subject != events.AuditCursorSubject {
		t.Fatalf("last message %v, %v; want the cursor", cur, err)
	}
	if err := st.DeleteMsg(ctx, cur.Sequence); err != nil {
		t.Fatal(err)
	}
	n, err := DropPartialBatch(ctx, b.JS)
	if err != nil || n < 2 {
		t.Fatalf("dropped %d, %v; want the batch's entries and tree message", n, err)
	}
	if again, err := DropPartialBatch(ctx, b.JS); err != nil || again != 0 {
		t.Fatalf("dropped %d more, %v; want none", again, err)
	}

	// One grant more: once the log holds it, it holds all before it.
	w.runWriter(t, "writer-after")
	w.grant(t, "acme", 40)
	want := map[string]bool{}
	for i := range 41 {
		want[fmt.Sprintf("grt_A%020d", i)] = true
	}
	testutil.Eventually(t, 20*time.Second, func() bool {
		return bytes.Contains(w.export(t, "acme"), []byte(fmt.Sprintf("grt_A%020d", 40)))
	}, "the log caught up")
	log := w.export(t, "acme")
	if chain := checkOnce(t, log, want); chain.Len() != 41 {
		t.Fatalf("%d entries; want 41", chain.Len())
	}
}
