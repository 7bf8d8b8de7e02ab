package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The docs name tests (`go test -run TestX`) and files as places to look:
// a name that is gone sends the reader nowhere. Every test, benchmark and
// fuzz target that README.md and docs/*.md cite is a function of some
// _test.go file, and every repository path they cite exists.
func TestDocsCiteWhatExists(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, "README.md")
	funcs := testFuncs(t)
	tests, paths := 0, 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		names, files := citedTests(text), citedPaths(text)
		tests, paths = tests+len(names), paths+len(files)
		for _, name := range names {
			if !cited(funcs, name) {
				t.Errorf("%s cites %s: no such test, benchmark or fuzz target", doc, name)
			}
		}
		for _, p := range files {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s cites %s: %v", doc, p, err)
			}
		}
	}
	// A scanner that finds nothing passes for the wrong reason.
	if tests < 100 || paths < 50 {
		t.Fatalf("found %d test names and %d paths in the docs: the scan is broken", tests, paths)
	}
	t.Logf("%d test names and %d repository paths cited, each per document", tests, paths)
}

var (
	testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Z0-9_]\w*)\(`)
	// A name followed by "…" is a prefix: TestTeam… cites the TestTeam tests.
	testCited = regexp.MustCompile(`\b((?:Test|Benchmark|Fuzz)[A-Z0-9_]\w*)(…)?`)
	// A path is cited in backticks or as a link's target.
	pathCited = regexp.MustCompile("`([^`\\s]+)`|\\]\\(([^)\\s#]+)")
)

// testFuncs are the names of the repository's test functions.
func testFuncs(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// cited reports whether a cited name (or prefix…) is one of funcs.
func cited(funcs map[string]bool, name string) bool {
	prefix, ok := strings.CutSuffix(name, "…")
	if !ok {
		return funcs[name]
	}
	for f := range funcs {
		if strings.HasPrefix(f, prefix) {
			return true
		}
	}
	return false
}

// citedTests are the test names a text cites (a subtest's parent for
// TestX/case).
func citedTests(text string) []string {
	seen := map[string]bool{}
	for _, m := range testCited.FindAllStringSubmatch(text, -1) {
		seen[m[1]+m[2]] = true
	}
	return sortedKeys(seen)
}

// citedPaths are the repository paths a text cites: a backticked word or
// a link target whose first element is a top-level file or folder of the
// repository (globs, URLs and placeholders are left alone).
func citedPaths(text string) []string {
	top := map[string]bool{}
	entries, _ := os.ReadDir(".")
	for _, e := range entries {
		top[e.Name()] = true
	}
	seen := map[string]bool{}
	for _, m := range pathCited.FindAllStringSubmatch(text, -1) {
		p := m[1] + m[2]
		p = strings.TrimSuffix(strings.TrimPrefix(p, "./"), "/")
		if i := strings.IndexAny(p, ":"); i > 0 && !strings.Contains(p, "://") {
			p = p[:i] // store/page.go:120
		}
		if strings.ContainsAny(p, "*?…<>{}$|,'\"=") || strings.Contains(p, "://") {
			continue
		}
		first, _, nested := strings.Cut(p, "/")
		if !top[first] || !nested && !strings.Contains(p, ".") {
			continue // not the repository's, or a word that is a folder's name
		}
		seen[p] = true
	}
	return sortedKeys(seen)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
