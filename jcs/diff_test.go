package jcs

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// errKind names the class of a Canonicalize error: a sentinel, or syntax
// for any other malformed JSON.
func errKind(err error) string {
	for _, s := range []error{ErrDuplicateKey, ErrInvalidUTF8, ErrNumber, ErrSurrogate, ErrDepth} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	if err != nil {
		return "syntax"
	}
	return ""
}

// checkOracle fails unless Canonicalize and the encoding/json canonicalizer
// it replaced agree on raw: the same bytes, or an error of the same kind.
// Only nesting deeper than 10000, which the oracle never refused, differs.
func checkOracle(t *testing.T, raw []byte) {
	t.Helper()
	got, err := Canonicalize(raw)
	want, wantErr := oldCanonicalize(raw)
	if errors.Is(err, ErrDepth) && len(raw) > maxDepth {
		return
	}
	if !bytes.Equal(got, want) || errKind(err) != errKind(wantErr) {
		t.Fatalf("Canonicalize(%q) = %q, %v; the oracle: %q, %v", raw, got, err, want, wantErr)
	}
}

// corpus returns the inputs the fuzz targets have collected over raw JSON
// (this package's and httpapi's body fuzzers), and the RFC 8785 vectors.
func corpus(t *testing.T) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob("testdata/fuzz/FuzzCanonicalize/*")
	more, _ := filepath.Glob("../httpapi/testdata/fuzz/Fuzz*Body/*")
	vectors, _ := filepath.Glob("testdata/rfc8785/*.json")
	for _, f := range append(append(files, more...), vectors...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".json") {
			out = append(out, b)
			continue
		}
		out = append(out, fuzzInput(t, f, b))
	}
	return out
}

// fuzzInput decodes the first argument, a []byte, of one corpus file of
// the go test fuzz v1 format.
func fuzzInput(t *testing.T, name string, b []byte) []byte {
	arg := strings.Split(string(b), "\n")[1]
	arg = strings.TrimSuffix(strings.TrimPrefix(arg, "[]byte("), ")")
	s, err := strconv.Unquote(arg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return []byte(s)
}

// TestCanonicalizeMatchesOracle: on the seeds, the fuzz corpus, the RFC
// vectors and the grammar's edges below (oracleProbes), the single-pass canonicalizer says exactly
// what the encoding/json one said.
func TestCanonicalizeMatchesOracle(t *testing.T) {
	inputs := corpus(t)
	if len(inputs) < 100 {
		t.Fatalf("only %d corpus inputs", len(inputs))
	}
	for _, s := range append(jcsSeeds, oracleProbes...) {
		inputs = append(inputs, []byte(s))
	}
	for _, raw := range inputs {
		checkOracle(t, raw)
	}
}

// oracleProbes are edges of the grammar, of the number rule and of which
// fault is reported first.
var oracleProbes = []string{
	` 1 `, `-0`, `-0.0e-0`, `0e99999999999999999999`, `1e-9223372036854775808`, `0.0e9223372036854775807`,
	`1E+2`, `1e-7`, `12.340e1`, `000`, `01`, `1.`, `.5`, `-`, `+1`, `1e`, `1e+`, `0.1`, `0.10000000000000001`,
	`100000000000000000000000`, `1e21`, `123456789012345`, `1234567890123456`, `9007199254740993`, `-9007199254740992`,
	`1424953923781206.25`, `1424953923781206.2`, `5e-324`, `4.9e-324`, `2e-324`, `1e-400`, `2.5e-324`, `0.000001`,
	`"\u0000\u001f\u007f\u2028\/\b\f\n\r\t"`, `"\uD834\uDD1E"`, `"\ud834"`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"\x01\"",
	`{"a":1,"a":}`, `{"a":1,"a":1e400}`, `{"a":1,"a"}`, `{"a":1,"b":{"c":1,"c":2},"n":1e400}`, `{"n":1e400,"a":1,"a":2}`,
	`[1e400,"\ud800"]`, `[1] "\ud800"`, `{"a":1}` + "\xff", `{"a" 1}`, `{"a":1 "b":2}`, `{,}`, `{"a":1,}`, `[1,]`, `[,1]`,
	`[}`, `{]`, `[1 2]`, `tru`, `truex`, `[true,fals]`, `nul`, `{"\u0061":1,"a":2}`, `{"b":1,"a":2,"b":3}`,
	`{"é":1,"e":2,"\ud83d\ude00":3,"\ufb33":4,"\uffff":5,"\ud800\udc00":6}`, `{"":1,"a":2,"aa":3,"ab":4}`, "{\"a\"\t:\r\n1}",
	`{"a":[{"z":1,"y":[2,{"d":1,"c":2}]}],"\n":null}`, `[[[[[]]]]]`, "\ufeff{}", `{}{}`, `{} x`,
}

// TestCanonicalizeMatchesOracleOnNumbers: random doubles, written in their
// shortest form and perturbed, are accepted and refused as before.
func TestCanonicalizeMatchesOracleOnNumbers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		if got, want := FormatES6(f), oldFormatES6(f); got != want {
			t.Fatalf("FormatES6(%b) = %s, the oracle %s", f, got, want)
		}
		s := strconv.FormatFloat(f, 'e', -1, 64)
		for _, text := range []string{s, strconv.FormatFloat(f, 'f', -1, 64), s + "0", strings.Replace(s, "e", "1e", 1), strconv.FormatFloat(f, 'e', 20, 64)} {
			checkOracle(t, []byte(text))
		}
	}
}

// TestCanonicalizeDepth: nesting of 10000 levels is accepted, as
// encoding/json accepts it; one more is ErrDepth, not a stack overflow.
func TestCanonicalizeDepth(t *testing.T) {
	for _, open := range []string{"[", `{"a":`} {
		closer := map[string]string{"[": "]", `{"a":`: "}"}[open]
		ok := strings.Repeat(open, maxDepth) + "1" + strings.Repeat(closer, maxDepth)
		if _, err := Canonicalize([]byte(ok)); err != nil {
			t.Errorf("%d levels of %s: %v", maxDepth, open, err)
		}
		deep := strings.Repeat(open, maxDepth+1) + "1" + strings.Repeat(closer, maxDepth+1)
		if _, err := Canonicalize([]byte(deep)); !errors.Is(err, ErrDepth) {
			t.Errorf("%d levels of %s: error = %v, want ErrDepth", maxDepth+1, open, err)
		}
	}
	if _, err := Canonicalize([]byte(strings.Repeat("[", 1<<20))); !errors.Is(err, ErrDepth) {
		t.Errorf("a megabyte of '[': error = %v, want ErrDepth", err)
	}
}

// TestCanonicalizeNumberScale: a number with more than 1e6 fraction
// digits is ErrNumber even when its value is a double's, as the oracle's
// math/big.Rat refused it (a scale beyond 10**±1e6); with 1e6 it passes.
func TestCanonicalizeNumberScale(t *testing.T) {
	one := func(zeros int) []byte { return []byte("1." + strings.Repeat("0", zeros)) }
	if got, err := Canonicalize(one(1e6)); err != nil || string(got) != "1" {
		t.Errorf("1e6 zeros: %.20s, %.40v; want 1", got, err)
	}
	if _, err := Canonicalize(one(1e6 + 1)); !errors.Is(err, ErrNumber) {
		t.Errorf("1e6+1 zeros: error = %.40v, want ErrNumber", err)
	}
}
