package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// sshDesk is paydesk serve --ssh on a fresh cache, and what the real
// OpenSSH client needs to reach it.
type sshDesk struct {
	env        map[string]string
	port       string
	knownHosts string
	stderr     *lockedBuffer
}

// startSSHDesk runs paydesk serve --ssh 127.0.0.1:0 until the test ends.
func startSSHDesk(t *testing.T) *sshDesk {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("no OpenSSH client")
	}
	dir := shortTemp(t)
	env := cliEnv(dir)
	env["XDG_RUNTIME_DIR"] = shortTemp(t)
	d := &sshDesk{env: env, knownHosts: filepath.Join(dir, "known_hosts"), stderr: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, IO{Stdout: io.Discard, Stderr: d.stderr, Getenv: func(k string) string { return env[k] }},
			[]string{"serve", "--listen", "127.0.0.1:0", "--ssh", "127.0.0.1:0"})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	addr := regexp.MustCompile(`ssh: +127\.0\.0\.1:(\d+) `)
	for deadline := time.Now().Add(stuckAfter); d.port == ""; time.Sleep(5 * time.Millisecond) {
		if m := addr.FindStringSubmatch(d.stderr.String()); m != nil {
			d.port = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no ssh address: %s", d.stderr.String())
		}
	}
	return d
}

// userKey makes a key pair in a temp folder and returns its private file.
func userKey(t *testing.T) string {
	t.Helper()
	path := filepath.Join(shortTemp(t), "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	return path
}

// addUser adds a user through the cache's owner (paydesk serve).
func (d *sshDesk) addUser(t *testing.T, name, key, role string) {
	t.Helper()
	code, out, errs := runEnv(t, context.Background(), d.env, nil, false, "user", "add", name, "--key", key+".pub", "--role", role)
	if code != 0 {
		t.Fatalf("user add %s: exit %d %s %s", name, code, out, errs)
	}
}

// sshCmd is OpenSSH's ssh to the desk as user with key, in batch mode.
func (d *sshDesk) sshCmd(ctx context.Context, user, key string, extra ...string) *exec.Cmd {
	args := []string{"-p", d.port, "-i", key, "-F", "none", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
		"-o", "StrictHostKeyChecking=accept-new", "-o", "UserKnownHostsFile=" + d.knownHosts, "-o", "LogLevel=ERROR"}
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(key), "TERM=xterm"}
	return cmd
}

// sshRun runs a command over ssh and returns its exit code and output.
func (d *sshDesk) sshRun(t *testing.T, user, key string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stuckAfter)
	defer cancel()
	cmd := d.sshCmd(ctx, user, key, append([]string{user + "@127.0.0.1"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
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

// TestCommandsOverSSH (issue 27, point 2): with the real OpenSSH client a
// command runs on the server as the key's user, with its output and exit
// code; the audit log names the user and the key's fingerprint; an
// unknown key and a password are refused; the server's files cannot be
// named from outside; only an admin manages users.
func TestCommandsOverSSH(t *testing.T) {
	d := startSSHDesk(t)
	aliceKey, adminKey, strangerKey := userKey(t), userKey(t), userKey(t)
	d.addUser(t, "alice", aliceKey, "agent")
	d.addUser(t, "root", adminKey, "admin")

	code, out, errs := d.sshRun(t, "alice", aliceKey, "test-reservation", "--approve", "--json")
	if code != 0 || !strings.Contains(out, `"status": 190`) {
		t.Fatalf("test-reservation over ssh: exit %d %s %s", code, out, errs)
	}
	fp, err := exec.Command("ssh-keygen", "-l", "-E", "sha256", "-f", aliceKey+".pub").Output()
	if err != nil {
		t.Fatal(err)
	}
	fingerprint := strings.Fields(string(fp))[1]
	code, out, errs = d.sshRun(t, "alice", aliceKey, "audit", "--json")
	if code != 0 {
		t.Fatalf("audit over ssh: exit %d %s", code, errs)
	}
	var entries []struct {
		Operator string `json:"operator"`
		Action   string `json:"action"`
	}
	if err := json.Unmarshal([]byte(out), &entries); err != nil || len(entries) == 0 {
		t.Fatalf("audit --json: %v %s", err, out)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Action, "user-") && e.Operator != "alice ("+fingerprint+")" {
			t.Errorf("audit operator %q; want alice (%s)", e.Operator, fingerprint)
		}
	}

	for _, tc := range []struct {
		name     string
		user     string
		key      string
		args     []string
		code     int
		stdout   string
		stderr   string
		noStdout bool
	}{
		{"an unknown command", "alice", aliceKey, []string{"frobnicate"}, 1, "", "not the console", false},
		{"a refused command's exit", "alice", aliceKey, []string{"show", "NOPE"}, 1, "", "NOPE", false},
		{"the server's files are not the client's", "alice", aliceKey, []string{"reservations", "--db", "/etc/passwd"}, 2, "", "names a file on the server", true},
		{"an agent may not add users", "alice", aliceKey, []string{"user", "add", "eve", "--key", "x", "--role", "admin"}, 1, "", "takes the role admin", true},
		{"an admin lists users", "root", adminKey, []string{"user", "list"}, 0, "alice", "", false},
		{"an unknown key", "alice", strangerKey, []string{"reservations"}, 255, "", "Permission denied (publickey)", true},
		{"alice's key as root", "root", aliceKey, []string{"reservations"}, 255, "", "Permission denied (publickey)", true},
		{"a password", "alice", aliceKey, []string{"-o", "PreferredAuthentications=password,keyboard-interactive", "-o", "BatchMode=no", "-o", "NumberOfPasswordPrompts=0", "reservations"}, 255, "", "Permission denied (publickey)", true},
	} {
		code, out, errs := d.sshRun(t, tc.user, tc.key, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errs, tc.stderr) || (tc.noStdout && out != "") {
			t.Errorf("%s: exit %d stdout %q stderr %q; want exit %d, %q, %q", tc.name, code, out, errs, tc.code, tc.stdout, tc.stderr)
		}
	}
	// Who added whom: the socket's user, and an admin over SSH with the
	// key's fingerprint.
	bobKey := userKey(t)
	bobPub, err := os.ReadFile(bobKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := d.sshRunIn(t, "root", adminKey, bobPub, "user", "add", "bob", "--key", "-", "--role", "viewer"); code != 0 {
		t.Fatalf("an admin adds bob over ssh: exit %d %s", code, errs)
	}
	code, out, errs = runEnv(t, context.Background(), d.env, nil, false, "user", "list", "--json")
	var us []struct {
		Name    string `json:"name"`
		AddedBy string `json:"added_by"`
	}
	if err := json.Unmarshal([]byte(out), &us); code != 0 || err != nil || len(us) != 3 {
		t.Fatalf("user list --json: exit %d %v %s %s", code, err, out, errs)
	}
	if us[0].Name != "alice" || us[0].AddedBy != "clitest" || us[1].Name != "bob" || !strings.HasPrefix(us[1].AddedBy, "root (SHA256:") {
		t.Errorf("added by: %+v; want alice by clitest (the socket), bob by root (SHA256:…)", us)
	}
	if !strings.Contains(readLog(t, d), "login refused") {
		t.Errorf("the refused logins are not in the log")
	}

	// Every change to the users is in the audit log with who made it
	// (issue 27, point 5): a role changed and a user removed over SSH by
	// the admin, alice added through the socket.
	for _, args := range [][]string{{"user", "role", "bob", "finance"}, {"user", "remove", "bob"}} {
		if code, _, errs := d.sshRun(t, "root", adminKey, args...); code != 0 {
			t.Fatalf("%v over ssh: exit %d %s", args, code, errs)
		}
	}
	code, out, errs = d.sshRun(t, "root", adminKey, "audit", "--json")
	var log []struct {
		Operator, Action, Target, Result string
	}
	if err := json.Unmarshal([]byte(out), &log); code != 0 || err != nil {
		t.Fatalf("audit --json: exit %d %v %s %s", code, err, out, errs)
	}
	var got []string
	for _, e := range log {
		if strings.HasPrefix(e.Action, "user-") {
			got = append(got, e.Action+" "+e.Target+" by "+strings.Fields(e.Operator)[0]+": "+e.Result)
			if e.Operator != "clitest" && !strings.HasPrefix(e.Operator, "root (SHA256:") {
				t.Errorf("%s by %q; want root (SHA256:…) or clitest", e.Action, e.Operator)
			}
		}
	}
	want := []string{"user-remove user bob by root: removed: was role finance", "user-role user bob by root: role finance, was viewer",
		"user-add user bob by root: added: role viewer", "user-add user root by clitest: added: role admin",
		"user-add user alice by clitest: added: role agent"}
	if len(got) != len(want) {
		t.Fatalf("the audit log's user changes, newest first:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("user change %d: %q; want %q…", i, got[i], want[i])
		}
	}
}

func readLog(t *testing.T, d *sshDesk) string {
	b, _ := os.ReadFile(filepath.Join(d.env["XDG_DATA_HOME"], "paydesk", "paydesk.log"))
	return string(b)
}

// pipeBuffer collects a process's output while the test reads it.
type pipeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (p *pipeBuffer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.Write(b)
}

func (p *pipeBuffer) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.b.String()
}

// TestConsoleOverSSHRemovedUser (issue 27, points 2 and 6): ssh with a
// pty opens the console as the user; removing the user ends the open
// console at once.
func TestConsoleOverSSHRemovedUser(t *testing.T) {
	d := startSSHDesk(t)
	key := userKey(t)
	d.addUser(t, "alice", key, "agent")
	ctx, cancel := context.WithTimeout(context.Background(), stuckAfter)
	defer cancel()
	cmd := d.sshCmd(ctx, "alice", key, "-tt", "alice@127.0.0.1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out := &pipeBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(stuckAfter); !strings.Contains(out.String(), "Reservations"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no console over ssh: %q", out.String())
		}
	}
	code, _, errs := runEnv(t, context.Background(), d.env, nil, false, "user", "remove", "alice")
	if code != 0 {
		t.Fatalf("user remove: exit %d %s", code, errs)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("ssh ended with %v; want exit 1", err)
		}
	case <-ctx.Done():
		t.Fatal("the removed user's console stayed open")
	}
	if !strings.Contains(out.String(), "was removed; the session ends") {
		t.Errorf("the user is not told why: %q", out.String())
	}
}
