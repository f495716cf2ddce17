package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/countersign/countersign/audit"
	"github.com/countersign/countersign/config"
	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/views"
)

const typePrefix = "dev.countersign."

// mermaid returns the first mermaid block of file that contains marker.
func mermaid(t *testing.T, file, marker string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```mermaid\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		if strings.Contains(body, marker) {
			return body
		}
	}
	t.Fatalf("%s has no mermaid block with %q", file, marker)
	return ""
}

// stateEdge is `from --> to: label` of a stateDiagram-v2.
var stateEdge = regexp.MustCompile(`^\s*(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)\s*(?::\s*(.*?))?\s*$`)

// diagramMoves parses the lifecycle diagram: its moves as the table writes
// them ([*] as the start is creation, status ""), and the states it ends.
func diagramMoves(t *testing.T, diagram string) (moves []kvstate.Move, ends []domain.Status) {
	for _, line := range strings.Split(diagram, "\n") {
		m := stateEdge.FindStringSubmatch(line)
		switch {
		case m == nil:
		case m[2] == "[*]":
			ends = append(ends, domain.Status(m[1]))
		default:
			from := domain.Status(m[1])
			if from == "[*]" {
				from = ""
			}
			moves = append(moves, kvstate.Move{Type: typePrefix + m[3], From: from, To: domain.Status(m[2])})
		}
	}
	if len(moves) == 0 {
		t.Fatal("no transitions found in the state diagram")
	}
	return moves, ends
}

func TestLifecycleDiagramMatchesTransitions(t *testing.T) {
	moves, ends := diagramMoves(t, mermaid(t, "concepts.md", "stateDiagram-v2"))
	table := kvstate.Moves()
	for _, m := range moves {
		if !slices.Contains(table, m) {
			t.Errorf("the diagram draws %s %q → %q, which kvstate's table does not allow", m.Type, m.From, m.To)
		}
	}
	for _, m := range table {
		if !slices.Contains(moves, m) {
			t.Errorf("kvstate's table allows %s %q → %q, which the diagram does not draw", m.Type, m.From, m.To)
		}
	}
	for _, s := range []domain.Status{domain.StatusPending, domain.StatusApproved, domain.StatusDenied, domain.StatusExpired, domain.StatusCancelled} {
		if slices.Contains(ends, s) != s.Terminal() {
			t.Errorf("state %s: drawn as final %v, terminal in the code %v", s, slices.Contains(ends, s), s.Terminal())
		}
	}
}

// requestTypes matches the short event types written on the path diagram.
var requestTypes = regexp.MustCompile(`request\.[a-z]+`)

func TestRequestPathDiagramMatchesTransitions(t *testing.T) {
	diagram := mermaid(t, "architecture.md", "flowchart")
	var drawn []string
	for _, line := range strings.Split(diagram, "\n") {
		if strings.Contains(line, "outbox -->") && strings.HasSuffix(strings.TrimSpace(line), "evstream") {
			for _, typ := range requestTypes.FindAllString(line, -1) {
				drawn = append(drawn, typePrefix+typ)
			}
		}
	}
	var table []string
	for _, m := range kvstate.Moves() {
		table = append(table, m.Type)
	}
	slices.Sort(drawn)
	slices.Sort(table)
	if table = slices.Compact(table); !slices.Equal(slices.Compact(drawn), table) {
		t.Errorf("the outbox's events in the diagram are %v; kvstate's table has %v", drawn, table)
	}
	for _, name := range []string{events.EventsStream, events.WorkStream, events.PeopleWorkStream, "KV bucket " + kvstate.BucketRequests, events.DeciderConsumer, audit.Stream} {
		if !strings.Contains(diagram, name) {
			t.Errorf("the path diagram does not name %q", name)
		}
	}
	// The watcher is drawn under the package that owns the mirrors, and
	// the layout lists the state and its read model where they live.
	store, read := pkgName(reflect.TypeFor[kvstate.Store]()), pkgName(reflect.TypeFor[views.Views]())
	if !strings.Contains(diagram, `mirror["`+read+": KV watcher") {
		t.Errorf("the path diagram's watcher is not named by its package %q", read)
	}
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{store, read} {
		if !strings.Contains(string(b), "\n"+name+"/ ") {
			t.Errorf("architecture.md's layout does not list %s/", name)
		}
	}
}

// pkgName is the last element of the import path of t's package.
func pkgName(t reflect.Type) string { return filepath.Base(t.PkgPath()) }

// link matches a Markdown link's target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// markdownFiles lists every Markdown file of the repository (outside
// node_modules and hidden directories), as paths relative to docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != ".." && (name == "node_modules" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestLinksStayInTheRepository: every Markdown file links only to files of
// the repository, by relative paths that never leave it (the README by
// paths without ..), and each #anchor names a heading of its page.
func TestLinksStayInTheRepository(t *testing.T) {
	files := markdownFiles(t)
	if len(files) < 20 {
		t.Fatalf("found only %d Markdown files: %v", len(files), files)
	}
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		for _, target := range links(t, f) {
			checkLink(t, f, target, anchors)
		}
	}
}

// links returns the link targets of a Markdown file, outside code blocks.
func links(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range link.FindAllStringSubmatch(prose(string(b)), -1) {
		out = append(out, m[1])
	}
	return out
}

// prose is a Markdown text without its fenced code blocks.
func prose(md string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func checkLink(t *testing.T, file, target string, anchors map[string]map[string]bool) {
	t.Helper()
	path, frag, _ := strings.Cut(target, "#")
	readme := filepath.Clean(file) == filepath.Clean("../README.md")
	switch {
	case strings.Contains(target, "://") || strings.HasPrefix(path, "/") || strings.HasPrefix(target, "mailto:"):
		t.Errorf("%s links outside the repository: %s", file, target)
		return
	case readme && strings.Contains(path, ".."):
		t.Errorf("README.md links with ..: %s", target)
	}
	full, _ := filepath.Abs(filepath.Join(filepath.Dir(file), path))
	if path == "" {
		full, _ = filepath.Abs(file)
	}
	root, _ := filepath.Abs("..")
	if rel, err := filepath.Rel(root, full); err != nil || strings.HasPrefix(rel, "..") {
		t.Errorf("%s links outside the repository: %s", file, target)
		return
	} else if _, err := os.Stat(full); err != nil {
		t.Errorf("%s links to %s, which does not exist", file, target)
		return
	}
	if frag == "" {
		return
	}
	if !strings.HasSuffix(full, ".md") {
		t.Errorf("%s links to #%s of %s, which is not a Markdown page", file, frag, path)
		return
	}
	if anchors[full] == nil {
		anchors[full] = headingAnchors(t, full)
	}
	if !anchors[full][frag] {
		t.Errorf("%s links to %s, whose page has no heading #%s", file, target, frag)
	}
}

// headingAnchors are the anchors GitHub gives a page's headings: the
// heading's text in lower case, punctuation dropped, spaces as hyphens,
// and -1, -2 … after a repeated one.
func headingAnchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(prose(string(b)), "\n") {
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		slug := slugify(text)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// linkText is a Markdown link, whose text alone is shown.
var linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// slugify is a heading's text as GitHub writes its anchor.
func slugify(heading string) string {
	heading = linkText.ReplaceAllString(strings.TrimSpace(heading), "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"Groups and approval policies":          "groups-and-approval-policies",
		"Changing the config without a restart": "changing-the-config-without-a-restart",
		"`countersign bench`: the figures":      "countersign-bench-the-figures",
		"What an agent (with a token) may try":  "what-an-agent-with-a-token-may-try",
		"The [SPEC](SPEC.md) §5 rules":          "the-spec-5-rules",
		"shell_prefix and shell_argv":           "shell_prefix-and-shell_argv",
	} {
		if got := slugify(in); got != want {
			t.Errorf("slugify(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPageTableListsEveryPage: docs/README.md, the one page table, links
// to every page under docs/, so that a page added or moved cannot be left
// out of it.
func TestPageTableListsEveryPage(t *testing.T) {
	listed := map[string]bool{}
	for _, target := range links(t, "README.md") {
		path, _, _ := strings.Cut(target, "#")
		listed[filepath.Clean(path)] = true
	}
	pages, _ := filepath.Glob("*.md")
	grouped, _ := filepath.Glob("*/*.md")
	for _, p := range append(pages, grouped...) {
		if p != "README.md" && !listed[p] {
			t.Errorf("docs/README.md does not list %s", p)
		}
	}
}

// testName is a test or fuzz target named in backquotes.
var testName = regexp.MustCompile("`((?:Test|Fuzz)[A-Z][A-Za-z0-9_]*)`")

// TestSecurityNamesRealTests: every test the threat model cites as proof
// is a test function of the repository, so that a renamed or deleted test
// cannot leave a defence unproved on paper.
func TestSecurityNamesRealTests(t *testing.T) {
	page, err := os.ReadFile("operators/security.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := testFuncs(t)
	cited := testName.FindAllStringSubmatch(string(page), -1)
	if len(cited) < 50 {
		t.Fatalf("security.md cites only %d tests", len(cited))
	}
	for _, m := range cited {
		if !defined[m[1]] {
			t.Errorf("security.md cites %s, which no _test.go file defines", m[1])
		}
	}
}

// testFuncs are the names of the repository's Test and Fuzz functions.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestREADMENamesTheGoVersion: the README says which Go go.mod needs.
func TestREADMENamesTheGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme, _ := os.ReadFile("../README.md")
	if want := "Go " + string(m[1]); !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q (go.mod's go line)", want)
	}
}

// TestConfigurationDocumentsEveryKey: every key the config file may hold,
// at any depth, is named in configuration.md.
func TestConfigurationDocumentsEveryKey(t *testing.T) {
	page, err := os.ReadFile("operators/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	keys := yamlKeys(reflect.TypeOf(config.Config{}), map[reflect.Type]bool{})
	if len(keys) < 20 {
		t.Fatalf("found only %d config keys: %v", len(keys), keys)
	}
	for _, k := range keys {
		if !strings.Contains(string(page), "`"+k+"`") {
			t.Errorf("operators/configuration.md does not name the config key `%s`", k)
		}
	}
}

// yamlKeys lists the yaml keys of t and of the structs below it.
func yamlKeys(t reflect.Type, seen map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return nil
	}
	seen[t] = true
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		out = append(out, name)
		out = append(out, yamlKeys(f.Type, seen)...)
	}
	return out
}

// TestLayoutNamesEveryPackage: the layout in architecture.md names each
// top-level directory that holds Go code, and every path it names exists,
// so that a package that moves moves there too.
func TestLayoutNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(b), "## Layout\n\n```\n")
	block, _, _ := strings.Cut(after, "```")
	named := map[string]bool{}
	for _, line := range strings.Split(block, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasSuffix(f[0], "/") && line[0] != ' ' {
			named[strings.TrimSuffix(f[0], "/")] = true
			if _, err := os.Stat(filepath.Join("..", f[0])); err != nil {
				t.Errorf("architecture.md's layout names %s, which does not exist", f[0])
			}
		}
	}
	dirs, _ := filepath.Glob("../*/*.go")
	for _, f := range dirs {
		dir := filepath.Base(filepath.Dir(f))
		if !named[dir] {
			t.Errorf("architecture.md's layout does not name %s/", dir)
			named[dir] = true
		}
	}
}
