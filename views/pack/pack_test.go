package pack

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// Whatever a record holds, it unpacks to the bytes packed, and a call
// digest lifted out packs the record at least 25 bytes smaller than one
// left in place.
func TestPackRoundTrip(t *testing.T) {
	const digest = "5b758119a0a53ac550f186311b418abb1531622c1bb01371e11d8e3e047eee5c"
	rec := func(d string) string {
		return `{"id":"req_01M8R37R37H1TYAH7X8RDD4EN9","tenant":"demo","call_digest":"sha256:` + d + `","status":"approved"}`
	}
	cases := []string{
		rec(digest),
		rec(strings.ToUpper(digest)),                         // not lowercase: left in place
		rec(digest[:63]),                                     // one digit short
		rec(digest + "0"),                                    // one digit more
		rec(digest[:40] + "g" + digest[41:]),                 // not hex
		rec(digest) + rec("00"+digest[2:]),                   // two: the first lifted
		`{"call_digest":"sha256:` + digest,                   // no closing quote
		`{"call_digest":"sha256:` + digest + `"`,             // the digest last
		`"call_digest":"sha256:` + digest + `"` + "\x01\x00", // control bytes around
		`{}`, ``,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 { // digests at random places in random bytes
		b := make([]byte, r.IntN(300))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		at := r.IntN(len(b) + 1)
		cases = append(cases, string(b[:at])+rec(digest)+string(b[at:]))
	}
	var p Packer
	for i, c := range cases {
		z, release := p.Pack([]byte(c))
		kept := p.Keep(z)
		release()
		got, err := p.Unpack(kept)
		if err != nil || !bytes.Equal(got, []byte(c)) {
			t.Fatalf("case %d: %q unpacks to %q (%v)", i, c, got, err)
		}
	}
	// A packer whose sample has another digest.
	var q Packer
	_, release := q.Pack([]byte(rec("00" + digest[2:])))
	release()
	other := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	lifted, release := q.Pack([]byte(rec(other)))
	n := len(lifted)
	release()
	plain, release := q.Pack([]byte(rec(strings.ToUpper(other))))
	defer release()
	if n+25 > len(plain) {
		t.Errorf("a lifted digest packs to %d bytes, the same record with an upper-case one to %d", n, len(plain))
	}
}

// A packed value that is not one is an error, never a panic.
func TestUnpackDamaged(t *testing.T) {
	var p Packer
	z, release := p.Pack([]byte(`{"call_digest":"sha256:5b758119a0a53ac550f186311b418abb1531622c1bb01371e11d8e3e047eee5c","x":1}`))
	good := bytes.Clone(z)
	release()
	for i, bad := range [][]byte{
		nil, {0}, {1}, {3}, {4, 0}, {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		good[:len(good)-1], good[:20], append([]byte{1, 200}, good[2:]...),
	} {
		if got, err := p.Unpack(bad); err == nil {
			t.Errorf("damaged %d (%x) unpacks to %q", i, bad, got)
		}
	}
}
