package jcs

import (
	"bytes"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

func readVector(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/rfc8785/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRFC8785Sample: the sample of RFC 8785 §3.2.2 canonicalizes to the
// text of §3.2.3 and the bytes of §3.2.4. The sample's 333333333.33333329
// is not its double's value as written, which countersign refuses (SPEC
// §4); written as the double's shortest form it passes.
func TestRFC8785Sample(t *testing.T) {
	in, want := readVector(t, "sample-input.json"), readVector(t, "sample-output.json")
	wantHex, err := hex.DecodeString(strings.Join(strings.Fields(string(readVector(t, "sample-output.hex"))), ""))
	if err != nil || !bytes.Equal(wantHex, want) {
		t.Fatalf("sample-output.json is not the bytes of §3.2.4 (%v)", err)
	}
	if _, err := Canonicalize(in); !errors.Is(err, ErrNumber) {
		t.Fatalf("Canonicalize(sample) error = %v, want ErrNumber for 333333333.33333329", err)
	}
	in = bytes.Replace(in, []byte("333333333.33333329"), []byte("333333333.3333333"), 1)
	for _, raw := range [][]byte{in, want} {
		if got, err := Canonicalize(raw); err != nil || !bytes.Equal(got, want) {
			t.Errorf("Canonicalize(%s) = %s, %v; want %s", raw, got, err, want)
		}
	}
}

// TestRFC8785Sorting: the keys of the §3.2.3 vector sort by UTF-16 code
// units into the RFC's order.
func TestRFC8785Sorting(t *testing.T) {
	got, err := Canonicalize(readVector(t, "sort-input.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
		"\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	if string(got) != want {
		t.Errorf("Canonicalize(sort vector) = %s, want %s", got, want)
	}
	order := strings.Split(strings.TrimSpace(string(readVector(t, "sort-order.txt"))), "\n")
	if values := objectValues(t, got); strings.Join(values, "\n") != strings.Join(order, "\n") {
		t.Errorf("values in order %q, want %q", values, order)
	}
}

// objectValues returns the string values of a flat object, in order.
func objectValues(t *testing.T, raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var values []string
	for i := 0; ; i++ {
		tok, err := dec.Token()
		if err != nil {
			return values
		}
		if s, ok := tok.(string); ok && i%2 == 0 {
			values = append(values, s)
		}
	}
}

// TestRFC8785Numbers: every row of Appendix B's table formats as the RFC
// writes it, and that text canonicalizes to itself; NaN and Infinity
// cannot be written, and a number overflowing to Infinity is ErrNumber.
func TestRFC8785Numbers(t *testing.T) {
	r := csv.NewReader(bytes.NewReader(readVector(t, "numbers.csv")))
	r.Comment, r.FieldsPerRecord = '#', 3
	rows, err := r.ReadAll()
	if err != nil || len(rows) != 26 {
		t.Fatalf("numbers.csv: %d rows, %v", len(rows), err)
	}
	for _, row := range rows {
		bits, err := strconv.ParseUint(row[0], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		f, want := math.Float64frombits(bits), row[1]
		if want == "" {
			if !math.IsNaN(f) && !math.IsInf(f, 0) {
				t.Errorf("row %s: no representation but %v is finite", row[0], f)
			}
			continue
		}
		if got := FormatES6(f); got != want {
			t.Errorf("FormatES6(%s) = %s, want %s", row[0], got, want)
		}
		if got, err := Canonicalize([]byte(want)); err != nil || string(got) != want {
			t.Errorf("Canonicalize(%s) = %s, %v", want, got, err)
		}
	}
	for _, in := range []string{"1.7976931348623159e308", "-1e309", "1e400"} {
		if _, err := Canonicalize([]byte(in)); !errors.Is(err, ErrNumber) {
			t.Errorf("Canonicalize(%s) error = %v, want ErrNumber", in, err)
		}
	}
	if got, err := Canonicalize([]byte("-0")); err != nil || string(got) != "0" {
		t.Errorf("Canonicalize(-0) = %s, %v; want 0", got, err)
	}
}
