package jcs

import (
	"errors"
	"math"
	"testing"
)

func TestCanonicalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":2,"a":1}`, `{"a":1,"b":2}`},
		{` { "a" : [ 1 , 2.0 , 1e2 , -0 ] } `, `{"a":[1,2,100,0]}`},
		{`{"n":1E-7,"m":1e21,"k":123456789012345680000}`, `{"k":123456789012345680000,"m":1e+21,"n":1e-7}`},
		{`{"s":"<>&\u2028é\u0007\"\\\/"}`, "{\"s\":\"<>&\u2028é\\u0007\\\"\\\\/\"}"},
		// RFC 8785 §3.2.3: keys sort by UTF-16 code units.
		{`{"\u20ac":1,"\r":2,"\ud83d\ude00":3,"1":4,"\u00e9":5}`, "{\"\\r\":2,\"1\":4,\"é\":5,\"€\":1,\"😀\":3}"},
		{`{"t":true,"f":false,"z":null}`, `{"f":false,"t":true,"z":null}`},
		{`{"x":0.1,"y":100.50}`, `{"x":0.1,"y":100.5}`},
	}
	for _, tt := range tests {
		got, err := Canonicalize([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Canonicalize(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{`{"a":1,"a":2}`, ErrDuplicateKey},
		{`{"o":{"k":1,"k":1}}`, ErrDuplicateKey},
		{`{"n":12345678901234567890}`, ErrNumber},
		{`{"n":1e400}`, ErrNumber},
		{"{\"s\":\"\xff\"}", ErrInvalidUTF8},
		{`{"s":"\ud800"}`, ErrSurrogate},
		{`{"s":"\udc00"}`, ErrSurrogate},
		{`{"\uDBFF":1}`, ErrSurrogate},
		{`{"s":["\ud83d\u0041"]}`, ErrSurrogate},
		{`{"s":"\ude00\ud83d"}`, ErrSurrogate},
		{`{"s":"\\\ud800"}`, ErrSurrogate},
		{`{"s":"\ud83d"}`, ErrSurrogate},
	}
	for _, tt := range tests {
		if _, err := Canonicalize([]byte(tt.in)); !errors.Is(err, tt.want) {
			t.Errorf("Canonicalize(%q) error = %v, want %v", tt.in, err, tt.want)
		}
	}
	for _, bad := range []string{`{"a":}`, `{"a":1}x`, `{"a":1`, ``} {
		if _, err := Canonicalize([]byte(bad)); err == nil {
			t.Errorf("Canonicalize(%q) accepted malformed JSON", bad)
		}
	}
}

func TestCanonicalizeKeepsPairedSurrogates(t *testing.T) {
	for in, want := range map[string]string{
		`{"s":"\ud83d\ude00"}`:  "{\"s\":\"\U0001F600\"}",
		`{"s":"\\ud800"}`:       `{"s":"\\ud800"}`, // an escaped backslash, then text
		`{"\u00e9":"\"\ud800"}`: "",                // a lone surrogate after an escaped quote
	} {
		got, err := Canonicalize([]byte(in))
		if want == "" {
			if !errors.Is(err, ErrSurrogate) {
				t.Errorf("Canonicalize(%s) error = %v, want ErrSurrogate", in, err)
			}
			continue
		}
		if err != nil || string(got) != want {
			t.Errorf("Canonicalize(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestFormatES6(t *testing.T) {
	tests := map[float64]string{
		1: "1", -1.5: "-1.5", 1e21: "1e+21", 1e20: "100000000000000000000", 1e-6: "0.000001",
		1e-7: "1e-7", 5e-324: "5e-324", math.MaxFloat64: "1.7976931348623157e+308", 0.000001234: "0.000001234",
		123456789012345680000: "123456789012345680000", 4.35: "4.35",
	}
	for in, want := range tests {
		if got := FormatES6(in); got != want {
			t.Errorf("FormatES6(%v) = %s, want %s", in, got, want)
		}
	}
}
