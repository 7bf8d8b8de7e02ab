package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"paydesk/internal/access"
	"paydesk/internal/private"
)

// Files over SSH. A command run over SSH runs on the server: a file it
// named would be the server's, which the client cannot see and must not
// reach. So a command over SSH reads its input from the session (the
// name "-", and the client sends the file: ssh … import - < orders.json)
// and writes its output to the session (stdout); it names no file. The
// console over SSH cannot hand a file to the client's terminal, so its
// exports and saved pushes go to the user's own folder on the server,
// which `paydesk exports` lists and streams back
// (ssh … exports NAME > NAME).

// errServerFile is the rule a file named over SSH breaks.
var errServerFile = errors.New("over SSH a command names no file on the server: give - and send the file on stdin")

// overSSH reports whether the command runs for a user over SSH.
func overSSH(ctx context.Context) (access.Principal, bool) {
	p, ok := access.From(ctx)
	return p, ok && p.Via == access.SSH
}

// inputFile is a file a command reads, named on its command line: the
// client's own (relative to its working folder) through the socket, and
// refused over SSH unless it is "-" (stdin, the session); flag is the
// flag that names it ("" for an argument), for the way out the refusal
// shows.
func (c *cmdContext) inputFile(ctx context.Context, flag, name string) (string, error) {
	if _, ssh := overSSH(ctx); ssh && name != "-" {
		how := c.name + " -"
		if flag != "" {
			how = c.name + " … " + flag + " -"
		}
		return "", fmt.Errorf("%s: %w (ssh … %s < %s)", clean(name), errServerFile, how, clean(filepath.Base(name)))
	}
	return c.path(name), nil
}

// userFilesDir is the folder of user's files on the server (the console's
// exports and saved pushes over SSH), under the data folder. A user's name
// is a login name (store.User), safe as a folder's.
func userFilesDir(dataDir, user string) string {
	return filepath.Join(dataDir, "exports", user)
}

// exportsCmd lists the files the console wrote for the user over SSH, or
// writes one to stdout.
func exportsCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "exports", sio: sio}
	cmd := c.command("exports [NAME]", "The console's exports over SSH: list them, or write one to stdout", cobra.MaximumNArgs(1), runExports)
	cmd.Long = `Over SSH the console writes its exports (e, E, bulk export) and saved pushes to your own
folder on the server. paydesk exports lists them; paydesk exports NAME writes one to stdout:
  ssh -p 2222 alice@desk.example.com exports paydesk-reservations-20261126-101500.csv > reservations.csv
On this machine the console writes them to --export-dir (and --fixture-dir) itself.`
	c.lookFlags()
	return cmd
}

func runExports(ctx context.Context, c *cmdContext) int {
	p, ssh := overSSH(ctx)
	if !ssh {
		return c.usage("on this machine the console's exports are files in --export-dir (export-dir in the config; default: the folder it started in)")
	}
	set, err := c.settings()
	if err != nil {
		return c.fail(err)
	}
	dir := userFilesDir(set.DataDir(), p.User)
	if len(c.args) == 1 {
		name := c.args[0]
		// A name, never a path: the user's folder is all there is.
		if name != filepath.Base(name) || name == "." || name == ".." || strings.HasPrefix(name, ".") {
			return c.usage("%s: name one of your exports (paydesk exports lists them), not a path", clean(name))
		}
		f, err := private.OpenStream(filepath.Join(dir, name))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return c.fail(fmt.Errorf("%s: no export of yours has this name (paydesk exports lists them)", clean(name)))
			}
			return c.fail(fmt.Errorf("%s: %w", clean(name), err))
		}
		defer f.Close()
		if _, err := io.Copy(c.sio.Stdout, f); err != nil {
			return c.fail(fmt.Errorf("%s: %w", clean(name), err))
		}
		return exitOK
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return c.fail(err)
	}
	type file struct {
		Name string `json:"name"`
		Size int64  `json:"size"`
	}
	files := []file{}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			files = append(files, file{e.Name(), info.Size()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	if c.flags.json {
		_ = writeJSON(c.sio.Stdout, files)
		return exitOK
	}
	if len(files) == 0 {
		fmt.Fprintln(c.sio.Stdout, "no exports yet: e (CSV) or E (JSON) in the console writes one")
		return exitOK
	}
	tw := tabwriter.NewWriter(c.sio.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBYTES")
	for _, f := range files {
		fmt.Fprintf(tw, "%s\t%d\n", clean(f.Name), f.Size)
	}
	_ = tw.Flush()
	return exitOK
}
