package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A snapshot is stored in parts, objects its encoder flushes (nats.go
// publishes an object's chunks without waiting, and an object larger than
// a stream's ingest queue, 128 MiB by default, is refused), and a
// manifest under the snapshot's name that names them. The manifest is
// written after the parts, so it names only complete ones, and the parts
// it no longer names are deleted after it.

// maxPart is the largest part a process reads: parts are not read whole
// into a buffer of a size they claim beyond it. It is not tied to the
// size a writer flushes at: a snapshot written by another version, in
// parts of another size (32 MiB before 8), is read all the same.
const maxPart = 64 << 20

const manifestMagic = "countersign snapshot manifest 1"

// manifest names a snapshot's parts: <name>.<gen>.<i> for i < parts.
type manifest struct {
	gen   string
	parts int
	size  int64
}

// Store keeps the snapshot called name in an object store.
type Store struct {
	obs  jetstream.ObjectStore
	name string
}

// NewStore returns the Store of the snapshot name in obs.
func NewStore(obs jetstream.ObjectStore, name string) *Store {
	return &Store{obs: obs, name: name}
}

// Name is the snapshot's name, its manifest's.
func (s *Store) Name() string { return s.name }

func (s *Store) partName(gen string, i int) string {
	return fmt.Sprintf("%s.%s.%d", s.name, gen, i)
}

func (s *Store) readManifest(ctx context.Context) (manifest, error) {
	info, err := s.obs.GetInfo(ctx, s.name)
	if err != nil {
		return manifest{}, err
	}
	if info.Size > 1024 { // not a manifest (a snapshot of an older version): never read whole
		return manifest{}, fmt.Errorf("%w: its manifest is %d bytes", ErrUnreadable, info.Size)
	}
	data, err := s.obs.GetBytes(ctx, s.name)
	if err != nil {
		return manifest{}, err
	}
	var mf manifest
	if n, err := fmt.Sscanf(string(data), manifestMagic+"\n%s %d %d\n", &mf.gen, &mf.parts, &mf.size); n != 3 || err != nil ||
		mf.parts < 1 || mf.size < 0 {
		return manifest{}, fmt.Errorf("%w: its manifest %q", ErrUnreadable, data)
	}
	return mf, nil
}

// Read reads the snapshot's parts into one buffer of its size. It returns
// jetstream.ErrObjectNotFound when there is none, and an error wrapping
// ErrUnreadable when its manifest or parts do not agree.
func (s *Store) Read(ctx context.Context) ([]byte, error) {
	mf, err := s.readManifest(ctx)
	if err != nil {
		return nil, err
	}
	// The buffer is made of the parts' stored sizes, not of the manifest's
	// word: packed values point into it for as long as they are held, so
	// it is made once and to size.
	var size int64
	for i := range mf.parts {
		info, err := s.obs.GetInfo(ctx, s.partName(mf.gen, i))
		if err != nil {
			return nil, fmt.Errorf("snapshot: part %d of %d: %w", i, mf.parts, err)
		}
		if info.Size > maxPart {
			return nil, fmt.Errorf("%w: part %s is %d bytes", ErrUnreadable, info.Name, info.Size)
		}
		if size += int64(info.Size); size > mf.size {
			break
		}
	}
	if size != mf.size {
		return nil, fmt.Errorf("%w: its parts hold %d bytes, its manifest says %d", ErrUnreadable, size, mf.size)
	}
	data := make([]byte, 0, size)
	for i := range mf.parts {
		if data, err = s.readPart(ctx, s.partName(mf.gen, i), data); err != nil {
			return nil, err
		}
	}
	if int64(len(data)) != mf.size {
		return nil, fmt.Errorf("%w: %d bytes, its manifest says %d", ErrUnreadable, len(data), mf.size)
	}
	return data, nil
}

// readPart appends the object name to data.
func (s *Store) readPart(ctx context.Context, name string, data []byte) ([]byte, error) {
	r, err := s.obs.Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("snapshot: part %s: %w", name, err)
	}
	defer r.Close()
	info, err := r.Info()
	if err != nil {
		return nil, err
	}
	if info.Size > maxPart {
		return nil, fmt.Errorf("%w: part %s is %d bytes", ErrUnreadable, name, info.Size)
	}
	data = slices.Grow(data, int(info.Size))
	at := len(data)
	data = data[:at+int(info.Size)]
	if _, err := io.ReadFull(r, data[at:]); err != nil {
		return nil, err
	}
	// Read to the end, where the reader checks the object's digest.
	if n, err := r.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("snapshot: part %s: not at its end after %d bytes: %w", name, info.Size, errors.Join(err, ErrUnreadable))
	}
	return data, nil
}

// Write stores the snapshot that encode writes, a part at each call of
// emit (encode reports false when it had nothing to write): the parts, then the manifest naming them, then
// the deletion of the parts no manifest names any more. A failed write
// deletes its parts and leaves the snapshot before it in place.
func (s *Store) Write(ctx context.Context, encode func(emit func([]byte) error) (bool, error)) error {
	mf := manifest{gen: strconv.FormatInt(time.Now().UnixNano(), 36)}
	wrote, err := encode(func(part []byte) error {
		if _, err := s.obs.PutBytes(ctx, s.partName(mf.gen, mf.parts), part); err != nil {
			return err
		}
		mf.parts++
		mf.size += int64(len(part))
		return nil
	})
	if err == nil && !wrote {
		return nil
	}
	if err == nil {
		_, err = s.obs.PutBytes(ctx, s.name, fmt.Appendf(nil, "%s\n%s %d %d\n", manifestMagic, mf.gen, mf.parts, mf.size))
	}
	if err != nil {
		for i := range mf.parts + 1 { // the parts written, and one that may be partly
			_ = s.obs.Delete(ctx, s.partName(mf.gen, i))
		}
		return err
	}
	// Another process may have written its manifest since: keep its parts.
	keep := []string{mf.gen}
	if cur, err := s.readManifest(ctx); err == nil {
		keep = append(keep, cur.gen)
	}
	s.sweep(ctx, keep)
	return nil
}

// sweep deletes the parts of every generation but keep's.
func (s *Store) sweep(ctx context.Context, keep []string) {
	objs, err := s.obs.List(ctx)
	if err != nil {
		return
	}
	prefix := s.name + "."
	for _, o := range objs {
		gen, _, ok := strings.Cut(strings.TrimPrefix(o.Name, prefix), ".")
		if ok && strings.HasPrefix(o.Name, prefix) && !slices.Contains(keep, gen) {
			_ = s.obs.Delete(ctx, o.Name)
		}
	}
}
