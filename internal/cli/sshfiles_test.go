package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sshRunIn runs a command over ssh with stdin from in.
func (d *sshDesk) sshRunIn(t *testing.T, user, key string, in []byte, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stuckAfter)
	defer cancel()
	cmd := d.sshCmd(ctx, user, key, append([]string{user + "@127.0.0.1"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("ssh: %v", err)
	return 0, "", ""
}

// TestFilesOverSSH (issue 27): a command over SSH names no file on the
// server — its input comes on stdin ("-"), its output goes to stdout —
// and the console's exports over SSH go to the user's folder on the
// server, which paydesk exports lists and streams back.
func TestFilesOverSSH(t *testing.T) {
	d := startSSHDesk(t)
	aliceKey, rootKey, bobKey := userKey(t), userKey(t), userKey(t)
	d.addUser(t, "alice", aliceKey, "agent")
	d.addUser(t, "root", rootKey, "admin")
	bobPub, err := os.ReadFile(bobKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	orders, err := os.ReadFile(filepath.Join("..", "..", "testdata", "webshop", "orders.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// A file the server has, which no client may name.
	secret := filepath.Join(d.env["XDG_DATA_HOME"], "paydesk", "orders.csv")
	if err := os.WriteFile(secret, orders, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name           string
		user, key      string
		in             []byte
		args           []string
		code           int
		stdout, stderr string
	}{
		{"import a server file by name", "alice", aliceKey, nil, []string{"import", "orders.csv"}, 1,
			"over SSH a command names no file on the server", ""},
		{"import an absolute server path", "alice", aliceKey, nil, []string{"import", secret}, 1,
			"ssh … import - < orders.csv", ""},
		{"import from stdin", "alice", aliceKey, orders, []string{"import", "-"}, 0, "imported", ""},
		{"a batch manifest by name", "alice", aliceKey, nil, []string{"batch", "capture", "shipments.csv", "--dry-run"}, 2,
			"", "over SSH a command names no file on the server"},
		{"a key file on the server", "root", rootKey, nil, []string{"user", "add", "bob", "--key", "/etc/passwd", "--role", "viewer"}, 2,
			"", "(ssh … user add … --key - < passwd)"},
		{"a key on stdin", "root", rootKey, bobPub, []string{"user", "add", "bob", "--key", "-", "--role", "viewer"}, 0,
			"user bob added: viewer", ""},
		{"no exports yet", "alice", aliceKey, nil, []string{"exports"}, 0, "no exports yet", ""},
		{"an export by path", "alice", aliceKey, nil, []string{"exports", "../paydesk.log"}, 2, "", "not a path"},
		{"an export nobody made", "alice", aliceKey, nil, []string{"exports", "nope.csv"}, 1, "", "no export of yours"},
	} {
		code, out, errs := d.sshRunIn(t, tc.user, tc.key, tc.in, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errs, tc.stderr) {
			t.Errorf("%s: exit %d stdout %q stderr %q; want exit %d, %q, %q", tc.name, code, out, errs, tc.code, tc.stdout, tc.stderr)
		}
	}
	if code, _, errs := runEnv(t, context.Background(), d.env, nil, false, "exports"); code != 2 || !strings.Contains(errs, "--export-dir") {
		t.Errorf("exports on this machine: exit %d %q; want 2 naming --export-dir", code, errs)
	}

	// The console over SSH exports the list: the status names the file
	// and how to fetch it, and exports streams it back.
	s := openSSHScreen(t, d, "alice", aliceKey, 120, 36)
	waitScreen(t, s, "SHOP-88001") // the orders imported above
	s.press("e")
	waitScreen(t, s, "ssh … exports paydesk-reservations-")
	if strings.Contains(s.text(), d.env["XDG_DATA_HOME"]) {
		t.Errorf("the status shows the server's path:\n%s", s.text())
	}
	code, out, errs := d.sshRun(t, "alice", aliceKey, "exports", "--json")
	var files []struct{ Name string }
	if err := json.Unmarshal([]byte(out), &files); code != 0 || err != nil || len(files) != 1 || !strings.HasSuffix(files[0].Name, ".csv") {
		t.Fatalf("exports --json: exit %d %v %q %s", code, err, out, errs)
	}
	code, out, errs = d.sshRun(t, "alice", aliceKey, "exports", files[0].Name)
	if code != 0 || !strings.Contains(out, "SHOP-") {
		t.Errorf("exports %s: exit %d %q %s; want the CSV with the imported orders", files[0].Name, code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(userFilesDir(filepath.Join(d.env["XDG_DATA_HOME"], "paydesk"), "alice"), files[0].Name)); err != nil {
		t.Errorf("the export is not in alice's folder: %v", err)
	}
	// Another user's exports are not alice's.
	if code, out, _ := d.sshRun(t, "root", rootKey, "exports"); code != 0 || !strings.Contains(out, "no exports yet") {
		t.Errorf("root's exports: exit %d %q; want none", code, out)
	}
}
