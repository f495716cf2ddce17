package pack

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/s2"
)

// requestDictText begins every packing dictionary. Changing it changes
// DictID, and snapshots packed with the old one are replayed
// instead of loaded.
const requestDictText = `{"id":"req_","tenant":"","agent":"agt_","session":"","turn":"","tool_call_id":"","capability":{"action":"shell.exec","target":"git"},"tool":"shell","arguments":{"command":"git status"},"subject":{"kind":"shell","command":"git status"},"stages":[{"text":"git status","prefix":["git","status"],"allowed_by":{"kind":"person","id":"u-1"},"scope":"session","allowed_at":"2026-` +
	`"}],"current_stage":1,"connection":null,"reason":"","call_digest":"sha256:","timeout":"1h","status":"denied","approver":{"kind":"agent","id":"agt_"},"chain":["agt_"],"endorsements":[{"agent":"agt_","note":"","at":"2026-` +
	`"}],"abstentions":[{"agent":"agt_","note":"","at":"` +
	`"}],"judge_escalated":true,"reviewer_reason":"","revision":1,"created_at":"2026-` +
	`","deadline_at":"2026-","claimed_at":null,"decision":{"status":"denied","by":{"kind":"agent","id":"agt_"},"note":"","decided_at":"2026-","quoted_rule":""}}` +
	`{"id":"req_","tenant":"","agent":"agt_","session":"","turn":"","tool_call_id":"","capability":{"action":"tools.call","target":""},"tool":"","arguments":{},"subject":{"kind":"tool"},"current_stage":0,"connection":null,"reason":"","call_digest":"sha256:","timeout":"24h","status":"expired","approver":{"kind":"person","id":""},"chain":["agt_main"],"endorsements":[],"judge_escalated":false,"reviewer_reason":null,"revision":1,"created_at":"2026-","deadline_at":"2026-","claimed_at":null,"decision":{"status":"expired","by":{"kind":"system"},"decided_at":"2026-"}}` +
	`{"id":"req_","tenant":"","agent":"agt_","session":"","turn":"","tool_call_id":"","capability":{"action":"tools.call","target":""},"tool":"","arguments":{"amount":,"currency":"GBP"},"subject":{"kind":"tool"},"current_stage":0,"connection":null,"reason":"","call_digest":"sha256:","timeout":"24h","status":"approved","approver":{"kind":"person","id":""},"chain":["agt_main","agt_"],"endorsements":[{"agent":"agt_main","note":"","at":"2026-"}],"judge_escalated":false,"reviewer_reason":null,"revision":2,"created_at":"2026-","deadline_at":"2026-","claimed_at":"2026-","decision":{"status":"approved","by":{"kind":"person","id":""},"scope":"once","decided_at":"2026-","expires_at":"2026-"}}` +
	`{"id":"req_","tenant":"","agent":"agt_","session":"","turn":"","tool_call_id":"","capability":{"action":"tools.call","target":""},"tool":"","arguments":{},"subject":{"kind":"tool"},"current_stage":0,"connection":null,"reason":"","call_digest":"sha256:","timeout":"24h","status":"approved","approver":null,"chain":["agt_main","agt_"],"endorsements":[],"judge_escalated":false,"reviewer_reason":null,"revision":0,"created_at":"2026-","deadline_at":"2026-","claimed_at":null,"decision":{"status":"approved","by":{"kind":"grant","id":"grt_"},"scope":"once","decided_at":"2026-","expires_at":"2026-"}}`

// packFormat names how a value is packed (see Pack); it is part of
// DictID.
const packFormat = "countersign pack 3: call digest lifted, a sample of several records\n"

// DictID names packFormat and requestDictText: a snapshot of values
// packed another way is not loaded.
var DictID = func() uint64 {
	sum := sha256.Sum256([]byte(packFormat + requestDictText))
	return binary.LittleEndian.Uint64(sum[:])
}()

// maxSample bounds the sample a Packer adds to its dictionary.
const maxSample = 8 << 10

// A Packer packs with a dictionary of requestDictText and a sample of the
// deployment's own records: the first maxSample bytes of the records it
// packs, several records, which bring this deployment's tenant, agents,
// tools, grants and argument shapes, so that a record packs far smaller
// than with the base dictionary alone (figures in
// docs/operators/performance.md). Until it has
// them it packs with requestDictText alone (the base dictionary), and each
// packed value says which of the two it needs. The sample is fixed from
// then on. A snapshot carries it, and a process that loads it adopts it.
type Packer struct {
	mu      sync.Mutex
	cur     atomic.Pointer[packDict] // with the sample (nil: still collecting it)
	collect []byte                   // the sample so far (under mu)

	amu   sync.Mutex
	arena []byte // the chunk packed values are carved from
	kept  uint64 // bytes kept, in all
}

// arenaChunk is the size of the chunks packed values are carved from. A
// value of its own allocation would cost 10% more in size-class rounding,
// and a million of them a million objects for the collector; values
// carved from one chunk end at about the same time (retention removes
// requests in the order they ended), so chunks are freed whole.
const arenaChunk = 64 << 10

type packDict struct {
	sample []byte
	d      *s2.Dict
}

func newPackDict(sample []byte) *packDict {
	sample = bytes.Clone(sample[:min(len(sample), maxSample)])
	text := append(append([]byte{0}, requestDictText...), sample...) // repeat offset 0; the sample last, nearest
	return &packDict{sample: sample, d: s2.NewDict(text)}
}

// baseDict is requestDictText alone.
var baseDict = sync.OnceValue(func() *packDict { return newPackDict(nil) })

// dict returns the dictionary to pack raw with, and whether it is the
// base one (the sample is still being collected; raw joins it).
func (p *Packer) dict(raw []byte) (*packDict, bool) {
	if d := p.cur.Load(); d != nil {
		return d, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.cur.Load(); d != nil {
		return d, false
	}
	p.collect = append(p.collect, raw[:min(len(raw), maxSample-len(p.collect))]...)
	if len(p.collect) < maxSample {
		return baseDict(), true
	}
	d := newPackDict(p.collect)
	p.collect = nil
	p.cur.Store(d)
	return d, false
}

// Adopt makes sample's dictionary the Packer's, unless it has another.
func (p *Packer) Adopt(sample []byte) bool {
	sample = sample[:min(len(sample), maxSample)]
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.cur.Load(); d != nil {
		return bytes.Equal(d.sample, sample)
	}
	p.cur.Store(newPackDict(sample))
	p.collect = nil
	return true
}

// Sample is the Packer's sample (nil: it is still collecting it).
func (p *Packer) Sample() []byte {
	if d := p.cur.Load(); d != nil {
		return d.sample
	}
	return nil
}

// packScratch holds the buffers pack encodes into: the encoder needs room
// for its worst case, several times what a record packs to.
var packScratch = sync.Pool{New: func() any { return new([]byte) }}

// A packed value begins with a byte saying whether its call digest was
// lifted out. The digest's 64 hex digits are the most a record holds that
// S2 cannot shrink (it has no entropy coding: a hex digit stays a byte),
// so the first `"call_digest":"sha256:<64 lowercase hex>"` of a record is
// packed as the digest's 32 bytes, after the byte 1 and the offset of its
// digits in the record; the record packed follows without them. Any
// other record (no such digest) is the byte 0 and the record packed. The
// first byte has 2 added when the record was packed with the base
// dictionary.
const (
	packPlain  = 0
	packDigest = 1
	packBase   = 2 // a flag: packed with the base dictionary
)

// digestField is what comes before the digits a Packer lifts out.
var digestField = []byte(`"call_digest":"sha256:`)

// liftDigest returns the offset of raw's call digest digits and their
// bytes, or false when raw has none to lift.
func liftDigest(raw []byte) (int, [32]byte, bool) {
	var sum [32]byte
	i := bytes.Index(raw, digestField)
	if i < 0 {
		return 0, sum, false
	}
	at := i + len(digestField)
	if len(raw) < at+65 || raw[at+64] != '"' {
		return 0, sum, false
	}
	for _, c := range raw[at : at+64] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return 0, sum, false
		}
	}
	if _, err := hex.Decode(sum[:], raw[at:at+64]); err != nil {
		return 0, sum, false
	}
	return at, sum, true
}

// Pack packs a request's stored JSON into a scratch buffer, and returns
// the packed bytes and the buffer's release. The bytes are valid until
// release: the mirror keeps a copy (Keep) only of a value it stores, so a
// value packed twice (by the watcher and by the writer) is kept once.
func (p *Packer) Pack(raw []byte) ([]byte, func()) {
	d, base := p.dict(raw)
	var flag byte
	if base {
		flag = packBase
	}
	buf := packScratch.Get().(*[]byte)
	if n := s2.MaxEncodedLen(len(raw)) + 2*len(raw) + 64; cap(*buf) < n {
		*buf = make([]byte, n)
	}
	out := (*buf)[:0]
	if at, sum, ok := liftDigest(raw); ok {
		out = append(out, packDigest|flag)
		out = binary.AppendUvarint(out, uint64(at))
		out = append(out, sum[:]...)
		// The record without its digits, in the buffer's far end.
		rest := (*buf)[cap(*buf)-len(raw)+64 : cap(*buf)]
		rest = append(append(rest[:0], raw[:at]...), raw[at+64:]...)
		raw = rest
	} else {
		out = append(out, packPlain|flag)
	}
	dst := out[len(out) : cap(out)-len(raw)]
	z := d.d.Encode(dst, raw)
	if len(z) > 0 && &z[0] != &dst[:1][0] { // not encoded in place (never, with room for the worst case)
		return append(out, z...), func() { packScratch.Put(buf) }
	}
	return out[:len(out)+len(z)], func() { packScratch.Put(buf) }
}

// Keep copies z into the arena (a large one into its own slice), in a
// slice of its own size (its capacity too: it is never appended to).
func (p *Packer) Keep(z []byte) []byte {
	p.amu.Lock()
	defer p.amu.Unlock()
	p.kept += uint64(len(z))
	if len(z) > arenaChunk/16 {
		return bytes.Clone(z)
	}
	if cap(p.arena)-len(p.arena) < len(z) {
		p.arena = make([]byte, 0, arenaChunk)
	}
	at := len(p.arena)
	p.arena = append(p.arena, z...)
	return p.arena[at:len(p.arena):len(p.arena)]
}

// Unpack returns the stored JSON packed in z.
func (p *Packer) Unpack(z []byte) ([]byte, error) { return p.UnpackInto(nil, z) }

// UnpackInto is Unpack into dst's room when it has enough.
func (p *Packer) UnpackInto(dst, z []byte) ([]byte, error) {
	if len(z) == 0 {
		return nil, errUnpack
	}
	d := baseDict()
	if z[0]&packBase == 0 {
		if d = p.cur.Load(); d == nil {
			return nil, errors.New("pack: a value packed with a sample this Packer does not have")
		}
	}
	switch z[0] &^ packBase {
	case packPlain:
		return d.d.Decode(dst[:0], z[1:])
	case packDigest:
		at, n := binary.Uvarint(z[1:])
		if n <= 0 || len(z) < 1+n+32 {
			return nil, errUnpack
		}
		sum, rest := z[1+n:1+n+32], z[1+n+32:]
		size, err := s2.DecodedLen(rest)
		if err != nil {
			return nil, err
		}
		if at > uint64(size) {
			return nil, errUnpack
		}
		// Decoded 64 bytes in, the record's end is already in place; its
		// start moves down, and the digits go between.
		if cap(dst) < size+64 {
			dst = make([]byte, size+64)
		}
		dst = dst[:size+64]
		if dec, err := d.d.Decode(dst[64:64], rest); err != nil || len(dec) != size {
			return nil, cmp.Or(err, errUnpack)
		}
		copy(dst[:at], dst[64:64+at])
		hex.Encode(dst[at:at+64], sum)
		return dst, nil
	}
	return nil, errUnpack
}

var errUnpack = errors.New("pack: a packed value that is not one")

// Kept is how many packed bytes Keep has kept, in all.
func (p *Packer) Kept() uint64 {
	p.amu.Lock()
	defer p.amu.Unlock()
	return p.kept
}
