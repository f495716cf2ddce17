package broker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Staging atomic batches in memory.
//
// nats-server stages every atomic batch of a single-replica file stream in
// a file store of its own, under the stream's directory
// (streams/<name>/batches/<hash>), before it applies the batch to the
// stream. On a server that syncs every write, that store costs a
// directory made, two metadata files written with O_SYNC, two directory
// syncs, a block sync and a directory removed, for every batch; the
// stream's own sync, after the batch is applied and before it is
// acknowledged, comes on top (what that costs, measured with kvstate's
// BenchmarkAtomicBatchSize: docs/operators/performance.md, "Measurements behind the
// design").
//
// The staged copy serves one purpose: after a crash that stopped the
// server half-way through applying a batch to its stream, it lets the next
// start apply the rest, so that the batch lands whole. countersign needs
// no such thing. Its batches (kvstate's group commit) gather independent
// writes, each with its own compare-and-set, and none is acknowledged
// before the stream has synced all of them; a batch cut short by a crash
// is a set of unacknowledged writes, some of which landed, as a single
// write can land and lose its acknowledgement. The audit log's batches
// must land whole, and need no staged copy either: a batch cut short is
// recognisable (the stream ends with messages of a batch and not its
// commit), and audit.DropPartialBatch removes it at the next start,
// before the log is read; its writer sends the batch again.
//
// So on the embedded server, where the machine has a tmpfs, the batches
// directory of each stream countersign names is a link to a
// directory of its own in memory (mode 0700, a fresh name per start,
// locked while the process runs). Where the process dies and the machine
// lives, the staged batches are still there for its next start, which
// removes them once the server is up; a start removes too the unlocked
// ones of processes that died and were not started again. After a machine
// crash they are gone, and the server logs that it could not restore a
// partial batch. Without a tmpfs (or on another OS) nothing changes.

// stagingRoots are where a tmpfs is looked for, first match wins.
var stagingRoots = func() []string { return []string{"/dev/shm", os.Getenv("XDG_RUNTIME_DIR")} }

// stagingPrefix begins the name of every staging directory in memory.
const stagingPrefix = "countersign-batches-"

// batchesDir is the directory, in a stream's directory, where nats-server
// stages its atomic batches.
const batchesDir = "batches"

// staged is one stream's batches link and the directory it points at,
// held locked through lock.
type staged struct {
	link, dir string
	lock      *os.File
}

// StageBatchesInMemory makes the embedded server stage the atomic batches
// of the named streams in a tmpfs (see the comment at the top of this
// file), and returns the memory directory's parent ("" when none was
// found, or NATS is external: nothing changes). Call it once the streams
// exist and before any batch is sent to them; Close undoes it. It removes
// what dead processes left in memory: by now the server has started, and
// has finished from this data's staging any batch a crash cut short.
func (b *Broker) StageBatchesInMemory(streams ...string) (string, error) {
	if b.Server == nil {
		return "", nil
	}
	root := tmpfsRoot()
	if root == "" {
		return "", nil
	}
	sweepDead(root)
	dir := b.Server.JetStreamConfig().StoreDir
	var errs []error
	for _, name := range streams {
		found, _ := filepath.Glob(filepath.Join(dir, "*", "streams", name))
		if len(found) != 1 {
			errs = append(errs, fmt.Errorf("broker: stream %s: %d directories", name, len(found)))
			continue
		}
		link := filepath.Join(found[0], batchesDir)
		// The server removed the previous link (or directory) as it
		// restored the stream; an empty directory is let go, anything
		// else is kept where the server expects it.
		if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("broker: stream %s: %w", name, err))
			continue
		}
		mem, lock, err := lockedDir(root)
		if err != nil {
			errs = append(errs, fmt.Errorf("broker: stream %s: %w", name, err))
			continue
		}
		if err := os.Symlink(mem, link); err != nil {
			_ = os.Remove(mem)
			lock.Close()
			errs = append(errs, fmt.Errorf("broker: stream %s: %w", name, err))
			continue
		}
		b.staged = append(b.staged, staged{link: link, dir: mem, lock: lock})
	}
	if len(b.staged) == 0 {
		root = ""
	}
	return root, errors.Join(errs...)
}

// unstage removes the batches links and their memory directories, once
// the server is down.
func (b *Broker) unstage() {
	for _, s := range b.staged {
		if t, err := os.Readlink(s.link); err == nil && t == s.dir {
			_ = os.Remove(s.link)
		}
		_ = os.RemoveAll(s.dir)
		s.lock.Close()
	}
	b.staged = nil
}

// lockedDir makes a staging directory in root, locked: made under another
// name and renamed once locked, so that no sweep takes it for a dead
// process's.
func lockedDir(root string) (string, *os.File, error) {
	tmp, err := os.MkdirTemp(root, "."+stagingPrefix)
	if err != nil {
		return "", nil, err
	}
	lock, ok := lockDir(tmp)
	if !ok {
		_ = os.Remove(tmp)
		return "", nil, fmt.Errorf("broker: cannot lock %s", tmp)
	}
	dir := filepath.Join(root, strings.TrimPrefix(filepath.Base(tmp), "."))
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Remove(tmp)
		lock.Close()
		return "", nil, err
	}
	return dir, lock, nil
}

// sweepDead removes root's staging directories no live process holds
// locked: left by processes that died and were not started again.
func sweepDead(root string) {
	dirs, _ := filepath.Glob(filepath.Join(root, stagingPrefix+"*"))
	for _, d := range dirs {
		if lock, ok := lockDir(d); ok {
			_ = os.RemoveAll(d)
			lock.Close()
		}
	}
}

// tmpfsRoot is the first of stagingRoots that is a writable tmpfs, or "".
func tmpfsRoot() string {
	for _, r := range stagingRoots() {
		if r == "" || !isTmpfs(r) {
			continue
		}
		if d, err := os.MkdirTemp(r, "."+stagingPrefix); err == nil { // not one for sweepDead
			_ = os.Remove(d)
			return r
		}
	}
	return ""
}

// SyncsFree reports whether the embedded server keeps its store on a
// tmpfs, where a sync costs nothing (kvstate.Config.SyncsFree). False for
// an external cluster, whose disks this process cannot see.
func (b *Broker) SyncsFree() bool {
	return b.Server != nil && isTmpfs(b.Server.JetStreamConfig().StoreDir)
}
