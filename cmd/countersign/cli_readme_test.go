package main

import (
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
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
		if len(args) < 2 || (args[0] != "countersign" && args[0] != "bin/countersign") {
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

// readmeBlock is the first fenced block of the README of kind lang
// holding marker.
func readmeBlock(t *testing.T, lang, marker string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```"+lang+"\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		if strings.Contains(body, marker) {
			return body
		}
	}
	t.Fatalf("the README has no %s block with %q", lang, marker)
	return ""
}

// issue 36's first hour: the README's team config is a whole config —
// a server starts from it and is called with its tokens — and its
// approve lines print what their comments say.
func TestREADMETeamConfigServes(t *testing.T) {
	yaml := readmeBlock(t, "yaml", "approval_policies")
	srv := servertest.Start(t, servertest.WithConfig(yaml))
	lines := readmeBlock(t, "sh", "Bearer main-dev")
	var curl string
	var approves [][]string
	for _, line := range strings.Split(lines, "\n") {
		switch {
		case strings.HasPrefix(line, "curl "):
			curl = line
		case strings.HasPrefix(line, "bin/countersign approve "):
			words := shellWords(line)
			_, comment, _ := strings.Cut(line, "# ")
			approves = append(approves, append(words[1:], comment))
		}
	}
	tok := regexp.MustCompile(`Bearer ([^']+)'`).FindStringSubmatch(curl)
	body := regexp.MustCompile(`-d '([^']+)'`).FindStringSubmatch(curl)
	if tok == nil || body == nil || len(approves) != 2 {
		t.Fatalf("the README's team lines do not parse: %q", lines)
	}
	rec := cliSubmitBody(t, srv, tok[1], body[1])
	for _, a := range approves {
		args, want := a[:len(a)-1], a[len(a)-1]
		for i := range args {
			args[i] = strings.Replace(args[i], "req_01…", string(rec.ID), 1)
		}
		token := ""
		for i := range args {
			if args[i] == "--token" && i+1 < len(args) {
				token = args[i+1]
			}
		}
		out := mustCLI(t, srv, token, args...)
		if !strings.Contains(out, strings.TrimSpace(want)) {
			t.Errorf("countersign %s printed %q, the README says %q", strings.Join(args, " "), out, want)
		}
	}
}

// Every serve line of the README parses with serve's real flags.
func TestREADMEServeLinesParse(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		args := shellWords(line)
		i := slices.Index(args, "serve")
		if i < 1 || !strings.HasSuffix(args[i-1], "countersign") {
			continue
		}
		n++
		fl, _ := serveFlagSet()
		fl.SetOutput(io.Discard)
		if err := fl.Parse(args[i+1:]); err != nil || fl.NArg() > 0 {
			t.Errorf("README line %q: %v %q", line, err, fl.Args())
		}
	}
	if n < 2 {
		t.Fatalf("found %d serve lines in the README", n)
	}
}
