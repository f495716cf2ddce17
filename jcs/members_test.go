package jcs

import (
	"errors"
	"strings"
	"testing"
)

// EachMember yields each top-level member as written, nested values
// whole, and refuses what is no object or ends before its close.
func TestEachMember(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                                 "",
		` { "a" : 1 , "b":"x\"y" }`:          `a=1;b="x\"y";`,
		`{"a":{"b":[1,{"c":"}"}]},"d":null}`: `a={"b":[1,{"c":"}"}]};d=null;`,
		`{"a":true}`:                         `a=true;`,
	} {
		var b strings.Builder
		err := EachMember([]byte(in), func(k, v []byte) error {
			b.WriteString(string(k) + "=" + string(v) + ";")
			return nil
		})
		if err != nil || b.String() != want {
			t.Errorf("EachMember(%s) = %q, %v; want %q", in, b.String(), err, want)
		}
	}
	for _, in := range []string{``, `[]`, `"a"`, `{"a":1`, `{"a" 1}`, `{"a":1 "b":2}`, `{a:1}`} {
		if err := EachMember([]byte(in), func(k, v []byte) error { return nil }); !errors.Is(err, ErrNotObject) {
			t.Errorf("EachMember(%q) = %v, want ErrNotObject", in, err)
		}
	}
	stop := errors.New("stop")
	n := 0
	if err := EachMember([]byte(`{"a":1,"b":2}`), func(k, v []byte) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("a stop from fn: %v after %d members, want stop after 1", err, n)
	}
}
