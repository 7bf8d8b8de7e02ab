package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/spf13/cobra"
)

func TestMain(m *testing.M) {
	// fang sizes the help to the terminal once per process; pin it so
	// the goldens do not depend on where the tests run.
	os.Setenv("__FANG_TEST_WIDTH", "100")
	os.Exit(m.Run())
}

// run runs paydesk with args and no terminal, in a fresh environment
// rooted in dir.
func run(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"XDG_DATA_HOME": filepath.Join(dir, "data"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"),
		"HOME": dir, "USER": "clitest"}
	code := Main(context.Background(), IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }}, args)
	return code, out.String(), errb.String()
}

// TestHelpGolden pins the help of the root and two commands (ASCII: no
// terminal, fixed width); regenerate with -update.
func TestHelpGolden(t *testing.T) {
	for name, args := range map[string][]string{
		"root":    {"--help"},
		"capture": {"capture", "--help"},
		"pushes":  {"pushes", "--help"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errs := run(t, t.TempDir(), args...)
			if code != 0 || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			golden.RequireEqual(t, []byte(out))
		})
	}
}

// allCommands walks the command tree.
func allCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, allCommands(sub)...)
	}
	return out
}

// commandArgs are the words that name c on the command line.
func commandArgs(c *cobra.Command) []string {
	path := strings.Fields(c.CommandPath())
	return path[1:]
}

// TestEveryCommandHelp: `paydesk X --help` exits 0 for every X, and the
// root's help names every command with its one-line summary.
func TestEveryCommandHelp(t *testing.T) {
	root := newRoot(IO{})
	_, rootHelp, _ := run(t, t.TempDir(), "--help")
	for _, c := range allCommands(root) {
		args := append(commandArgs(c), "--help")
		code, out, errs := run(t, t.TempDir(), args...)
		if code != 0 || errs != "" || !strings.Contains(out, "USAGE") {
			t.Errorf("paydesk %s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
		}
		if c.Parent() == root && !c.Hidden && !strings.Contains(rootHelp, c.Short) {
			t.Errorf("paydesk --help does not list %s with %q", c.Name(), c.Short)
		}
		if c != root && !c.Hidden && c.Short == "" {
			t.Errorf("paydesk %s has no summary", strings.Join(commandArgs(c), " "))
		}
	}
	// A group without its subcommand shows its help, not an error.
	if code, out, _ := run(t, t.TempDir(), "giftcard"); code != 0 || !strings.Contains(out, "pay AMOUNT") {
		t.Errorf("paydesk giftcard: exit %d\n%s", code, out)
	}
}

func TestVersionAndCompletion(t *testing.T) {
	code, out, _ := run(t, t.TempDir(), "--version")
	if code != 0 || !strings.Contains(out, "paydesk version "+version()) {
		t.Fatalf("--version: exit %d %q", code, out)
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errs := run(t, t.TempDir(), "completion", shell)
		if code != 0 || !strings.Contains(out, "paydesk") || len(out) < 500 {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, code, len(out), errs)
		}
	}
	// Completion of a filter's values.
	code, out, _ = run(t, t.TempDir(), "__complete", "reservations", "--state", "")
	if code != 0 || !strings.Contains(out, "partly_captured") {
		t.Errorf("completing --state: exit %d %q", code, out)
	}
}

// TestUsageErrorsExit2: cobra's own refusals are usage errors.
func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"nosuchcommand"},
		{"capture"},
		{"show", "a", "b"},
		{"reservations", "--nosuchflag"},
		{"audit", "--limit", "many"},
		{"test-reservation", "--approve", "--decline"},
		{"resolve", "1"},
		{"reservations", "--config", "/nonexistent/paydesk.toml"},
		{"capture", "R1", "--mode", "live"},
	} {
		code, _, errs := run(t, t.TempDir(), args...)
		if code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
}

// TestSharedFlagsOnEverySubcommand: each shared flag a command has is the
// one definition, and it reaches the settings the command runs with
// (crush once shipped a root-only flag that broke a subcommand).
func TestSharedFlagsOnEverySubcommand(t *testing.T) {
	root := newRoot(IO{})
	env := map[string]string{"HOME": t.TempDir()}
	for _, c := range allCommands(root) {
		if !c.Runnable() || strings.HasPrefix(c.Name(), "__") || c.Name() == "help" || c.Name() == "completion" ||
			(c.Parent() != nil && c.Parent().Name() == "completion") {
			continue
		}
		for _, p := range persistentFlags {
			if c.Flags().Lookup(p) == nil && c.InheritedFlags().Lookup(p) == nil && c.PersistentFlags().Lookup(p) == nil {
				t.Errorf("paydesk %s lacks --%s", c.CommandPath(), p)
			}
		}
		if c.Flags().Lookup("gateway") == nil || c.Name() == "listen" {
			continue // listen takes --gateway only to sync with it; it is the listener (--addr), not a client of one
		}
		args := append(commandArgs(c), "--db", "/x/flag.db", "--gateway", "https://testgw.example.com", "--listen", "127.0.0.1:9",
			"--push-url", "https://hooks.example.com/p", "--website-key", "WK")
		set, err := parseSettings(t, env, args...)
		if err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		if set.DB != "/x/flag.db" || set.Gateway != "https://testgw.example.com" || set.Listen != "127.0.0.1:9" ||
			set.PushURL != "https://hooks.example.com/p" || set.WebsiteKey != "WK" {
			t.Errorf("paydesk %s: %+v", c.CommandPath(), set)
		}
	}
}
