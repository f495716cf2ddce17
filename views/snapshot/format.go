package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// magic names the snapshot's format and what its index keys mean: 4
// indexes a terminal request under the approver it ended with, so a
// snapshot of 3 is not used (its history would miss those).
const magic = "countersign mirror snapshot 4\n"

// ErrUnreadable is a snapshot, or a part of one, that is not one.
var ErrUnreadable = errors.New("snapshot: unreadable")

// Head identifies what a snapshot was taken of.
type Head struct {
	Created time.Time // the stream's creation
	Seq     uint64    // S: every write up to it is in the snapshot
	At      time.Time // when write S was stored
	PackID  uint64    // the packing of the values not held in full
	Sample  []byte    // and its sample
	Count   uint64    // the entries (read from the end; ignored by NewEncoder)
}

// Stream is what a snapshot is checked against.
type Stream struct {
	Created time.Time
	LastSeq uint64
}

// Usable reports why a snapshot cannot be trusted for a stream, or nil;
// maxAge bounds the age of write S when the stream was written after it
// (the purge markers of removals after S must not have expired yet).
func (h Head) Usable(s Stream, now time.Time, maxAge time.Duration) error {
	switch {
	case !h.Created.Equal(s.Created):
		return fmt.Errorf("taken of another stream (created %v, the stream %v)", h.Created, s.Created)
	case s.LastSeq < h.Seq:
		return fmt.Errorf("the stream is behind it (at %d, the snapshot at %d)", s.LastSeq, h.Seq)
	case s.LastSeq > h.Seq && now.Sub(h.At) > maxAge: // written since: a removal's marker may be gone
		return fmt.Errorf("too old (its last write at %v)", h.At)
	}
	return nil
}

// An Encoder writes a snapshot: its head, then entries, and its entry
// count last (End). Strings that repeat (agents, statuses, index keys)
// go once with Ref, and then by number.
type Encoder struct {
	buf  []byte
	dict map[string]uint64
}

// NewEncoder begins a snapshot of h in a buffer of size bytes.
func NewEncoder(h Head, size int) *Encoder {
	e := &Encoder{buf: make([]byte, 0, size)}
	e.buf = append(e.buf, magic...)
	e.buf = binary.AppendVarint(e.buf, h.Created.UnixNano())
	e.buf = binary.AppendUvarint(e.buf, h.Seq)
	e.buf = binary.AppendVarint(e.buf, h.At.UnixNano())
	e.buf = binary.LittleEndian.AppendUint64(e.buf, h.PackID)
	e.Bytes(h.Sample)
	return e
}

// Len is the size of what is written since the last Flush.
func (e *Encoder) Len() int { return len(e.buf) }

// Byte writes c.
func (e *Encoder) Byte(c byte) { e.buf = append(e.buf, c) }

// Uvarint writes v.
func (e *Encoder) Uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

// Str writes s, its length first.
func (e *Encoder) Str(s string) {
	e.Uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// Bytes writes b, its length first.
func (e *Encoder) Bytes(b []byte) {
	e.Uvarint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

// Ref writes 0 and the string the first time, its number (from 1) after.
func (e *Encoder) Ref(s string) {
	if n, ok := e.dict[s]; ok {
		e.Uvarint(n)
		return
	}
	if e.dict == nil {
		e.dict = map[string]uint64{}
	}
	e.dict[s] = uint64(len(e.dict) + 1)
	e.buf = append(e.buf, 0)
	e.Str(s)
}

// Flush hands what is written to emit (which may keep it only until it
// returns) and starts the next part.
func (e *Encoder) Flush(emit func([]byte) error) error {
	err := emit(e.buf)
	e.buf = e.buf[:0]
	return err
}

// End writes the entry count and flushes the last part.
func (e *Encoder) End(count uint64, emit func([]byte) error) error {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, count)
	return e.Flush(emit)
}

// A Decoder reads a snapshot's entries. Its first failure sticks: every
// read after it returns the zero value, and Err reports ErrUnreadable.
type Decoder struct {
	b      []byte
	dict   []string
	err    error
	intern func(string) string
}

// Decode reads the head of a snapshot and returns a Decoder of its
// entries; intern is applied to each string Ref reads the first time.
func Decode(data []byte, intern func(string) string) (Head, *Decoder, error) {
	if !bytes.HasPrefix(data, []byte(magic)) || len(data) < len(magic)+8 {
		return Head{}, nil, ErrUnreadable
	}
	end := len(data) - 8
	d := &Decoder{b: data[len(magic):end], intern: intern}
	var h Head
	h.Created = time.Unix(0, d.varint())
	h.Seq = d.Uvarint()
	h.At = time.Unix(0, d.varint())
	if d.err != nil || len(d.b) < 8 {
		return Head{}, nil, ErrUnreadable
	}
	h.PackID = binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	h.Sample = d.Bytes()
	if d.err != nil {
		return Head{}, nil, ErrUnreadable
	}
	h.Count = binary.LittleEndian.Uint64(data[end:])
	if h.Count > uint64(len(d.b))/4 { // an entry takes 4 bytes at least
		return Head{}, nil, ErrUnreadable
	}
	return h, d, nil
}

// Err is ErrUnreadable once a read failed, else nil.
func (d *Decoder) Err() error { return d.err }

// Left is how many bytes of entries are left to read.
func (d *Decoder) Left() int { return len(d.b) }

// Uvarint reads what Encoder.Uvarint wrote.
func (d *Decoder) Uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// varint reads what binary.AppendVarint wrote: a zig-zag uvarint.
func (d *Decoder) varint() int64 {
	u := d.Uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// Byte reads what Encoder.Byte wrote.
func (d *Decoder) Byte() byte {
	if len(d.b) < 1 {
		d.Fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// Str reads what Encoder.Str wrote.
func (d *Decoder) Str() string {
	n := d.Uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.Fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// Bytes returns what Encoder.Bytes wrote, in place: a loaded mirror keeps
// its packed values in the snapshot's buffer.
func (d *Decoder) Bytes() []byte {
	n := d.Uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.Fail()
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

// Ref reads what Encoder.Ref wrote.
func (d *Decoder) Ref() string {
	n := d.Uvarint()
	switch {
	case d.err != nil:
		return ""
	case n == 0:
		s := d.intern(d.Str())
		d.dict = append(d.dict, s)
		return s
	case n > uint64(len(d.dict)):
		d.Fail()
		return ""
	}
	return d.dict[n-1]
}

// Fail marks the snapshot unreadable (an entry that is not one).
func (d *Decoder) Fail() {
	if d.err == nil {
		d.err = ErrUnreadable
	}
	d.b = nil
}
