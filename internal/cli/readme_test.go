package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// invocation finds paydesk (or ./paydesk, or go run .) where a shell
// command starts: at the line's start, after $( or a pipe, ; or &&, and
// after VAR=value assignments.
var invocation = regexp.MustCompile(`(?:^|\$\(|\|\s*|;\s*|&&\s*)(?:[A-Z_]+=\S+\s+)*(?:paydesk|\./paydesk|go run \.)(?:\s+([^|;)&#]*))?`)

// shellBlocks returns the lines of the markdown's sh/bash/console blocks,
// and the body of its toml blocks.
func shellBlocks(t *testing.T, path string) (lines []string, toml []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	kind, pending := "", ""
	var block strings.Builder
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```") && kind == "":
			kind = strings.TrimPrefix(l, "```")
			if kind == "" {
				kind = "text"
			}
			block.Reset()
		case strings.HasPrefix(l, "```"):
			if kind == "toml" {
				toml = append(toml, block.String())
			}
			kind = ""
		case kind == "sh" || kind == "bash" || kind == "console" || kind == "shell":
			// A line ending in a backslash goes on on the next one, as in
			// the shell: the command is checked whole.
			l = strings.TrimPrefix(l, "$ ")
			if pending != "" {
				l, pending = pending+" "+strings.TrimSpace(l), ""
			}
			if strings.HasSuffix(l, "\\") {
				pending = strings.TrimSuffix(l, "\\")
				continue
			}
			lines = append(lines, l)
		case kind == "toml":
			block.WriteString(l + "\n")
		}
	}
	return lines, toml
}

// words splits a command's arguments as a shell would for our purposes:
// quotes group, and a comment ends the line.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	quote, in := rune(0), false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in || cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
			in = false
		case r == '#' && cur.Len() == 0:
			return out
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// TestREADMEExamples reads the README's shell blocks and checks every
// paydesk command in them: the command exists, its flags exist and parse,
// its arguments are the right number; files under testdata/ exist; the
// TOML example is a valid config file.
func TestREADMEExamples(t *testing.T) {
	repo := filepath.Join("..", "..")
	lines, tomls := shellBlocks(t, filepath.Join(repo, "README.md"))
	checked := 0
	for _, line := range lines {
		for _, m := range invocation.FindAllStringSubmatch(line, -1) {
			args := words(strings.TrimSpace(m[1]))
			root := newRoot(IO{})
			root.Version = version()
			root.InitDefaultVersionFlag()
			root.InitDefaultHelpCmd()
			root.InitDefaultCompletionCmd()
			cmd, rest, err := root.Find(args)
			if err != nil {
				t.Errorf("%q: %v", line, err)
				continue
			}
			cmd.InitDefaultHelpFlag()
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%q: %v", line, err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("%q: %v", line, err)
			}
			if err := cmd.ValidateRequiredFlags(); err != nil {
				t.Errorf("%q: %v", line, err)
			}
			for _, a := range args {
				if strings.HasPrefix(a, "testdata/") {
					if _, err := os.Stat(filepath.Join(repo, a)); err != nil {
						t.Errorf("%q: %v", line, err)
					}
				}
			}
			checked++
		}
	}
	if checked < 15 {
		t.Fatalf("only %d paydesk commands found in the README's shell blocks", checked)
	}
	if len(tomls) == 0 {
		t.Fatal("no TOML example in the README")
	}
	for _, text := range tomls {
		p := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readConfigFile(p); err != nil {
			t.Errorf("the README's config example: %v", err)
		}
	}
	// Links to files in the repository resolve (docs/webshop.md is the
	// lead's to write).
	text, _ := os.ReadFile(filepath.Join(repo, "README.md"))
	for _, m := range regexp.MustCompile(`\]\(((?:docs|testdata)/[^)#]+)`).FindAllStringSubmatch(string(text), -1) {
		if m[1] == "docs/webshop.md" {
			continue
		}
		if _, err := os.Stat(filepath.Join(repo, m[1])); err != nil {
			t.Errorf("README links to %s: %v", m[1], err)
		}
	}
}

func TestWords(t *testing.T) {
	got := words(`show "$RES" --reason 'other: x y' # comment`)
	want := []string{"show", "$RES", "--reason", "other: x y"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("%q", got)
	}
}
