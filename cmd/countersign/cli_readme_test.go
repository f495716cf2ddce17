package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestREADMECLIExamplesParse: every people's-CLI line in the README parses
// with the flags the commands really have.
func TestREADMECLIExamplesParse(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		args := shellWords(line)
		if len(args) < 2 || args[0] != "countersign" {
			continue
		}
		cmd, ok := cliLookup(args[1])
		if !ok {
			continue
		}
		n++
		env := cliEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "t" }}
		if o, code := cliParse(cmd, args[2:], env); o == nil {
			t.Errorf("README line %q does not parse (exit %d)", line, code)
		}
	}
	if n < 5 {
		t.Fatalf("found %d CLI lines in the README, want the people's CLI block", n)
	}
}

// shellWords splits a shell line into words: double quotes group, # starts
// a comment.
func shellWords(line string) []string {
	var out []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range strings.TrimSpace(line) {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case quoted:
			cur.WriteRune(r)
		case r == '#':
			return shellFlush(out, &cur, inWord)
		case r == ' ' || r == '\t':
			out, inWord = shellFlush(out, &cur, inWord), false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	return shellFlush(out, &cur, inWord)
}

func shellFlush(out []string, cur *strings.Builder, inWord bool) []string {
	if inWord {
		out = append(out, cur.String())
	}
	cur.Reset()
	return out
}
