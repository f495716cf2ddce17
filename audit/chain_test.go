package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// sealLog makes n chained entries of tenant t, one every step from start.
func sealLog(t testing.TB, n int, start time.Time, step time.Duration) [][]byte {
	t.Helper()
	lines, prev := make([][]byte, 0, n), ZeroHash
	for i := 1; i <= n; i++ {
		e := Entry{Seq: uint64(i), At: start.Add(time.Duration(i) * step), Tenant: "acme",
			Type: "dev.countersign.request.decided", Actor: Actor{Kind: "person", ID: "u-1"},
			Subject: fmt.Sprintf("req_%08d", i), Data: []byte(fmt.Sprintf(`{"n": %d, "note":"ok"}`, i)), Prev: prev}
		line, err := Seal(&e)
		if err != nil {
			t.Fatal(err)
		}
		lines, prev = append(lines, line), e.Hash
	}
	return lines
}

func join(lines [][]byte) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestVerifyCountsAGoodLog(t *testing.T) {
	c, err := VerifyLog(bytes.NewReader(join(sealLog(t, 20, time.Now(), time.Second))))
	if err != nil || c.Len() != 20 {
		t.Fatalf("got %d, %v; want 20 checked", c.Len(), err)
	}
}

func TestSealIsCanonicalWithHash(t *testing.T) {
	line := sealLog(t, 1, time.Unix(0, 0), time.Second)[0]
	if !bytes.HasPrefix(line, []byte(`{"actor":{"id":"u-1","kind":"person"},"at":"1970-01-01T00:00:01Z","data":{"n":1,"note":"ok"},"hash":"`)) ||
		!bytes.Contains(line, []byte(`"prev":"`+ZeroHash+`","seq":1,`)) {
		t.Fatalf("got %s", line)
	}
}

// Seal's form is the RFC 8785 form of the whole entry, strings that JSON
// encoders escape differently included.
func TestSealAgreesWithTheGenericForm(t *testing.T) {
	e := Entry{Seq: 1, At: time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600)), Tenant: "acme", Type: "t",
		Actor: Actor{Kind: "person", ID: "<u&1>\u2028"}, Subject: "é\u2029\"\\\t", Prev: ZeroHash,
		Data: []byte(`{"b": 1.50, "a": ["<>&", "\u00e9", 1e3], "c": {"z": null, "y": true}}`)}
	line, err := Seal(&e)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]json.RawMessage
	mustUnmarshal(t, line, &obj)
	want, err := canonical(obj)
	if h, _ := hashOf(obj); err != nil || !bytes.Equal(line, want) || h != e.Hash {
		t.Fatalf("Seal: %s (hash %s)\nthe generic form: %s (hash %s)", line, e.Hash, want, h)
	}
}

func TestVerifyNamesTheFirstBadEntry(t *testing.T) {
	good := sealLog(t, 10, time.Now(), time.Second)
	cases := []struct {
		name   string
		edit   func([][]byte) []byte
		seq    uint64
		reason string
	}{
		{"flipped byte in a middle entry", func(l [][]byte) []byte {
			l[4] = bytes.Replace(l[4], []byte(`"note":"ok"`), []byte(`"note":"oK"`), 1)
			return join(l)
		}, 5, "hash"},
		{"edited middle entry, resealed", func(l [][]byte) []byte {
			var e Entry
			mustUnmarshal(t, l[4], &e)
			e.Actor.ID = "mallory"
			l[4], _ = Seal(&e)
			return join(l)
		}, 6, "prev"},
		{"removed entry", func(l [][]byte) []byte { return join(append(l[:3:3], l[4:]...)) }, 4, "seq is 5"},
		{"reordered pair", func(l [][]byte) []byte { l[6], l[7] = l[7], l[6]; return join(l) }, 7, "seq is 8"},
		{"truncated last line", func(l [][]byte) []byte { b := join(l); return b[:len(b)-20] }, 10, ""},
		{"cut after a newline, first entry dropped", func(l [][]byte) []byte { return join(l[1:]) }, 1, "seq is 2"},
		{"reformatted entry", func(l [][]byte) []byte {
			l[2] = bytes.Replace(l[2], []byte(`{"actor"`), []byte(`{ "actor"`), 1)
			return join(l)
		}, 3, "RFC 8785"},
		{"an entry of another tenant", func(l [][]byte) []byte {
			var e Entry
			mustUnmarshal(t, l[8], &e)
			e.Tenant = "globex"
			l[8], _ = Seal(&e)
			return join(l)
		}, 9, "tenant"},
		{"extra member", func(l [][]byte) []byte {
			l[1] = bytes.Replace(l[1], []byte(`{"actor"`), []byte(`{"a":1,"actor"`), 1)
			return join(l)
		}, 2, "unknown member"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lines := make([][]byte, len(good))
			for i := range good {
				lines[i] = bytes.Clone(good[i])
			}
			_, err := VerifyLog(bytes.NewReader(tc.edit(lines)))
			var bad *BadEntryError
			if !errors.As(err, &bad) || bad.Seq != tc.seq || !strings.Contains(bad.Reason, tc.reason) {
				t.Fatalf("got %v; want entry %d refused (%s)", err, tc.seq, tc.reason)
			}
		})
	}
}

func TestCheckpointCatchesARewrite(t *testing.T) {
	lines := sealLog(t, 30, time.Now(), time.Second)
	skey, vkey, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	old := signedCheckpoint(t, lines[:20], skey)
	cp, err := OpenCheckpoint(old, vkey)
	if err != nil {
		t.Fatal(err)
	}
	today, _ := VerifyLog(bytes.NewReader(join(lines)))
	if err := CheckExtends(today, cp, Origin("acme")); err != nil {
		t.Fatalf("an appended log: %v", err)
	}
	// Rewrite entry 7 and reseal everything after it: the chain holds,
	// the checkpoint does not.
	rewritten := resealFrom(t, lines, 6, func(e *Entry) { e.Subject = "req_forged" })
	chain, err := VerifyLog(bytes.NewReader(join(rewritten)))
	if err != nil {
		t.Fatalf("the resealed chain should verify on its own: %v", err)
	}
	if err := CheckExtends(chain, cp, Origin("acme")); err == nil || !strings.Contains(err.Error(), "rewritten") {
		t.Fatalf("got %v; want the rewrite caught", err)
	}
	short, _ := VerifyLog(bytes.NewReader(join(lines[:15])))
	if err := CheckExtends(short, cp, Origin("acme")); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("got %v; want the truncation caught", err)
	}
	if err := CheckExtends(today, cp, Origin("other")); err == nil {
		t.Fatal("a checkpoint of another log was accepted")
	}
}

func TestCheckpointSignedByAnotherKeyFails(t *testing.T) {
	lines := sealLog(t, 5, time.Now(), time.Second)
	skey, _, _ := NewKey()
	_, otherV, _ := NewKey()
	if _, err := OpenCheckpoint(signedCheckpoint(t, lines, skey), otherV); err == nil {
		t.Fatal("a checkpoint signed by another key was accepted")
	}
	v, err := VerifierKey(skey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCheckpoint(signedCheckpoint(t, lines, skey), v); err != nil {
		t.Fatalf("VerifierKey's key: %v", err)
	}
}

func TestProofsCheckWithTlog(t *testing.T) {
	chain, err := VerifyLog(bytes.NewReader(join(sealLog(t, 37, time.Now(), time.Second))))
	if err != nil {
		t.Fatal(err)
	}
	tr := chain.Tree()
	for _, old := range []int64{1, 5, 16, 36, 37} {
		p, err := tr.ProveTree(old, 37)
		if err != nil {
			t.Fatal(err)
		}
		oh, _ := tr.Root(old)
		nh, _ := tr.Root(37)
		if err := tlog.CheckTree(p, 37, nh, old, oh); err != nil {
			t.Errorf("consistency %d→37: %v", old, err)
		}
	}
	p, err := tr.ProveRecord(9, 37)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := tr.Root(37)
	leaf := tr.hashes[tlog.StoredHashIndex(0, 8)]
	if err := tlog.CheckRecord(p, 37, root, 8, leaf); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]int64{{0, 37}, {38, 37}, {5, 38}} {
		if _, err := tr.ProveTree(bad[0], bad[1]); err == nil {
			t.Errorf("ProveTree(%d, %d) should fail", bad[0], bad[1])
		}
	}
}

// TestAYearExportsAndVerifies: a year of entries, one an hour (one every
// ten minutes without -short), verifies, and one flipped byte is named.
func TestAYearExportsAndVerifies(t *testing.T) {
	step := 10 * time.Minute
	if testing.Short() {
		step = time.Hour
	}
	n := int(365 * 24 * time.Hour / step)
	log := join(sealLog(t, n, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), step))
	c, err := VerifyLog(bytes.NewReader(log))
	if err != nil || c.Len() != uint64(n) {
		t.Fatalf("got %d, %v; want %d", c.Len(), err, n)
	}
	at := bytes.Index(log, []byte(fmt.Sprintf(`"subject":"req_%08d"`, n/2)))
	log[at+len(`"subject":"req_`)] ^= 1
	var bad *BadEntryError
	if _, err := VerifyLog(bytes.NewReader(log)); !errors.As(err, &bad) || bad.Seq != uint64(n/2) {
		t.Fatalf("got %v; want entry %d named", err, n/2)
	}
}

func signedCheckpoint(t *testing.T, lines [][]byte, skey string) []byte {
	t.Helper()
	chain, err := VerifyLog(bytes.NewReader(join(lines)))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := chain.Tree().Root(chain.Tree().Size())
	s, err := NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.Sign(Checkpoint{Origin: Origin("acme"), Size: chain.Tree().Size(), Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func resealFrom(t *testing.T, lines [][]byte, i int, edit func(*Entry)) [][]byte {
	out := append([][]byte(nil), lines...)
	var prev string
	for j := i; j < len(out); j++ {
		var e Entry
		mustUnmarshal(t, out[j], &e)
		if j == i {
			edit(&e)
		} else {
			e.Prev = prev
		}
		line, err := Seal(&e)
		if err != nil {
			t.Fatal(err)
		}
		out[j], prev = line, e.Hash
	}
	return out
}
