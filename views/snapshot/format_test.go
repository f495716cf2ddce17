package snapshot

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func encode(t *testing.T, h Head, entries func(e *Encoder), count uint64) []byte {
	t.Helper()
	var data []byte
	e := NewEncoder(h, 64)
	entries(e)
	if err := e.End(count, func(p []byte) error { data = append(data, p...); return nil }); err != nil {
		t.Fatal(err)
	}
	return data
}

// What an Encoder writes, a Decoder reads back: the head, and each entry's
// strings, numbers, bytes and repeated strings by number.
func TestFormatRoundTrip(t *testing.T) {
	created := time.Unix(0, 1_700_000_000_123_456_789)
	h := Head{Created: created, Seq: 42, At: created.Add(time.Minute), PackID: 0xfeed, Sample: []byte("sample")}
	data := encode(t, h, func(e *Encoder) {
		e.Str("k1")
		e.Uvarint(7)
		e.Byte(0)
		e.Ref("agt_a")
		e.Ref("agt_a")
		e.Bytes([]byte{1, 2, 3})
	}, 1)
	got, d, err := Decode(data, func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(h.Created) || got.Seq != h.Seq || !got.At.Equal(h.At) || got.PackID != h.PackID ||
		!bytes.Equal(got.Sample, h.Sample) || got.Count != 1 {
		t.Fatalf("head %+v, want %+v and count 1", got, h)
	}
	if k, rev, full, a, b, z := d.Str(), d.Uvarint(), d.Byte(), d.Ref(), d.Ref(), d.Bytes(); k != "k1" || rev != 7 || full != 0 ||
		a != "agt_a" || b != "agt_a" || !bytes.Equal(z, []byte{1, 2, 3}) || d.Err() != nil || d.Left() != 0 {
		t.Fatalf("entry %q %d %d %q %q %v (%v, %d left)", k, rev, full, a, b, z, d.Err(), d.Left())
	}
}

// Data that is no snapshot, or one cut short or claiming more entries
// than it could hold, is ErrUnreadable, never a panic or a huge buffer.
func TestDecodeRefusesDamaged(t *testing.T) {
	good := encode(t, Head{Seq: 1}, func(e *Encoder) { e.Str("key1") }, 1)
	claims := bytes.Clone(good)
	claims[len(claims)-8] = 0xff // a count of 255 entries in a few bytes
	for i, bad := range [][]byte{nil, []byte("countersign mirror snapshot 3\n12345678"), good[:len(magic)+3], claims} {
		if _, _, err := Decode(bad, func(s string) string { return s }); !errors.Is(err, ErrUnreadable) {
			t.Errorf("damaged %d: %v, want ErrUnreadable", i, err)
		}
	}
	_, d, _ := Decode(good, func(s string) string { return s })
	if d.Ref(); d.Err() == nil { // "key1" read as a reference: 4 names no string yet
		t.Error("a reference to no string read back")
	}
}

// A snapshot is trusted only for the stream it was taken of, never ahead
// of it, and, when the stream moved on, only while write S is young.
func TestUsable(t *testing.T) {
	now := time.Now()
	created := now.Add(-time.Hour)
	h := Head{Created: created, Seq: 10, At: now.Add(-2 * time.Hour)}
	for _, c := range []struct {
		name string
		s    Stream
		ok   bool
	}{
		{"same stream, no write since", Stream{Created: created, LastSeq: 10}, true},
		{"another stream", Stream{Created: created.Add(time.Second), LastSeq: 10}, false},
		{"the stream behind it", Stream{Created: created, LastSeq: 9}, false},
		{"written since, S too old", Stream{Created: created, LastSeq: 11}, false},
	} {
		if err := h.Usable(c.s, now, time.Hour); (err == nil) != c.ok {
			t.Errorf("%s: %v, want usable %v", c.name, err, c.ok)
		}
	}
	if err := h.Usable(Stream{Created: created, LastSeq: 11}, now, 3*time.Hour); err != nil {
		t.Errorf("written since, S young enough: %v", err)
	}
}
