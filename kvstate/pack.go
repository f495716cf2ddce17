package kvstate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/s2"
)

// The request mirror holds each terminal request as its stored JSON,
// compressed with S2 against a dictionary: typical records (the field
// names and the values that repeat from one request to the next) and a
// sample of the deployment's own. A 900-byte record packs to 150-270
// bytes in about 1.5 µs and unpacks in about 0.3 µs, so a page of old requests is read from memory instead
// of from KV, where each cold 4 MB message block costs about 10 ms to
// load (measured on a million requests of bench --scenario fill).

// requestDictText begins every packing dictionary. Changing it changes
// requestDictID, and snapshots packed with the old one are replayed
// instead of loaded.
const requestDictText = `{"id":"req_","tenant":"","agent":"agt_","session":"","turn":"","tool_call_id":"","capability":{"action":"shell.exec","target":"git"},"tool":"shell","arguments":{"command":"git status"},"subject":{"kind":"shell","command":"git status"},"stages":[{"text":"git status","prefix":["git","status"],"allowed_by":{"kind":"person","id":"u-1"},"scope":"session","allowed_at":"2026-` +
	`"}],"current_stage":1,"connection":null,"reason":"","call_digest":"sha256:","timeout":"1h","status":"denied","approver":{"kind":"agent","id":"agt_"},"chain":["agt_"],"endorsements":[{"agent":"agt_","note":"","at":"2026-` +
	`"}],"abstentions":[{"agent":"agt_","note":"","at":"` +
	`"}],"judge_escalated":true,"reviewer_reason":"","revision":1,"created_at":"2026-` +
	`","deadline_at":"2026-","claimed_at":null,"decision":{"status":"denied","by":{"kind":"agent","id":"agt_"},"note":"","decided_at":"2026-","quoted_rule":""}}` +
	`{"id":"req_","tenant":"","agent":"agt_","session":"","turn":"","tool_call_id":"","capability":{"action":"tools.call","target":""},"tool":"","arguments":{},"subject":{"kind":"tool"},"current_stage":0,"connection":null,"reason":"","call_digest":"sha256:","timeout":"24h","status":"expired","approver":{"kind":"person","id":""},"chain":["agt_main"],"endorsements":[],"judge_escalated":false,"reviewer_reason":null,"revision":1,"created_at":"2026-","deadline_at":"2026-","claimed_at":null,"decision":{"status":"expired","by":{"kind":"system"},"decided_at":"2026-"}}` +
	`{"id":"req_","tenant":"","agent":"agt_","session":"","turn":"","tool_call_id":"","capability":{"action":"tools.call","target":""},"tool":"","arguments":{"amount":,"currency":"GBP"},"subject":{"kind":"tool"},"current_stage":0,"connection":null,"reason":"","call_digest":"sha256:","timeout":"24h","status":"approved","approver":{"kind":"person","id":""},"chain":["agt_main","agt_"],"endorsements":[{"agent":"agt_main","note":"","at":"2026-"}],"judge_escalated":false,"reviewer_reason":null,"revision":2,"created_at":"2026-","deadline_at":"2026-","claimed_at":"2026-","decision":{"status":"approved","by":{"kind":"person","id":""},"scope":"once","decided_at":"2026-","expires_at":"2026-"}}` +
	`{"id":"req_","tenant":"","agent":"agt_","session":"","turn":"","tool_call_id":"","capability":{"action":"tools.call","target":""},"tool":"","arguments":{},"subject":{"kind":"tool"},"current_stage":0,"connection":null,"reason":"","call_digest":"sha256:","timeout":"24h","status":"approved","approver":null,"chain":["agt_main","agt_"],"endorsements":[],"judge_escalated":false,"reviewer_reason":null,"revision":0,"created_at":"2026-","deadline_at":"2026-","claimed_at":null,"decision":{"status":"approved","by":{"kind":"grant","id":"grt_"},"scope":"once","decided_at":"2026-","expires_at":"2026-"}}`

// requestDictID names requestDictText in snapshots.
var requestDictID = func() uint64 {
	sum := sha256.Sum256([]byte(requestDictText))
	return binary.LittleEndian.Uint64(sum[:])
}()

// maxSample bounds the sample a packer adds to its dictionary.
const maxSample = 8 << 10

// A packer packs with a dictionary of requestDictText and a sample: the
// first record it packs, which brings this deployment's tenant, agents,
// tools and argument shapes. The dictionary is fixed from then on. A
// snapshot carries the sample, and a process that loads it adopts it.
type packer struct {
	mu  sync.Mutex
	cur atomic.Pointer[packDict]
}

type packDict struct {
	sample []byte
	d      *s2.Dict
}

func newPackDict(sample []byte) *packDict {
	sample = bytes.Clone(sample[:min(len(sample), maxSample)])
	text := append(append([]byte{0}, requestDictText...), sample...) // repeat offset 0; the sample last, nearest
	return &packDict{sample: sample, d: s2.NewDict(text)}
}

// dict returns the dictionary, making it with sample if there is none.
func (p *packer) dict(sample []byte) *packDict {
	if d := p.cur.Load(); d != nil {
		return d
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d := p.cur.Load(); d != nil {
		return d
	}
	d := newPackDict(sample)
	p.cur.Store(d)
	return d
}

// adopt makes sample's dictionary the packer's, unless it has another.
func (p *packer) adopt(sample []byte) bool {
	return bytes.Equal(p.dict(sample).sample, sample[:min(len(sample), maxSample)])
}

// sample is the packer's sample (nil: it has packed nothing yet).
func (p *packer) sample() []byte {
	if d := p.cur.Load(); d != nil {
		return d.sample
	}
	return nil
}

// packScratch holds the buffers pack encodes into: the encoder needs room
// for its worst case, several times what a record packs to.
var packScratch = sync.Pool{New: func() any { return new([]byte) }}

// pack packs a request's stored JSON, in a slice of its own size.
func (p *packer) pack(raw []byte) []byte {
	d := p.dict(raw)
	buf := packScratch.Get().(*[]byte)
	defer packScratch.Put(buf)
	if n := s2.MaxEncodedLen(len(raw)); cap(*buf) < n {
		*buf = make([]byte, n)
	}
	return bytes.Clone(d.d.Encode((*buf)[:cap(*buf)], raw))
}

// unpack returns the stored JSON packed in z.
func (p *packer) unpack(z []byte) ([]byte, error) {
	d := p.cur.Load()
	if d == nil {
		return nil, errors.New("kvstate: unpack before any pack")
	}
	return d.d.Decode(nil, z)
}
