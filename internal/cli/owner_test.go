package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"paydesk/internal/hub"
)

// shortTemp is a temporary folder whose path leaves room for a socket
// beside a cache in it.
func shortTemp(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "pd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// cliEnv is runCLI's environment for a cache in dir.
func cliEnv(dir string) map[string]string {
	return map[string]string{"XDG_DATA_HOME": dir, "XDG_CONFIG_HOME": dir, "USER": "clitest", "HOME": dir}
}

// runEnv runs paydesk with env; a stdin stands for a terminal someone
// types into when interactive.
func runEnv(t *testing.T, ctx context.Context, env map[string]string, stdin io.Reader, interactive bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(ctx, IO{Stdin: stdin, Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }, Interactive: interactive}, args)
	return code, out.String(), errb.String()
}

// startOwner opens the cache env names as the console does, without its
// screen (paydesk serve), and serves its socket until the test ends. The
// owner runs as operator "ownerdesk".
func startOwner(t *testing.T, env map[string]string) (*host, *hub.Server) {
	t.Helper()
	own := map[string]string{}
	for k, v := range env {
		own[k] = v
	}
	own["USER"] = "ownerdesk"
	getenv := func(k string) string { return own[k] }
	set, err := resolveSettings(nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	set.console = true
	rt, err := start(context.Background(), set, getenv)
	if err != nil {
		t.Fatal(err)
	}
	h := &host{what: "paydesk serve", rt: rt, db: rt.db, set: rt.set, getenv: getenv}
	srv, err := h.serve()
	if err != nil || srv == nil {
		rt.Close()
		t.Fatalf("serve the socket: %v", err)
	}
	t.Cleanup(func() {
		_ = srv.Close()
		rt.Close()
	})
	return h, srv
}

// elapsed is the one part of a batch's pre-flight that differs from run
// to run.
var elapsed = regexp.MustCompile(`checked in [0-9.]+(µs|ms|s)`)

// TestThroughOwnerAsDirect: with an owner holding the cache, a command
// prints and exits exactly as it did run by itself before, and one that
// moves money runs on the owner's runtime with the client's operator in
// the audit log. Before the owner had a socket every one of them failed:
// the cache is in use by another paydesk process.
func TestThroughOwnerAsDirect(t *testing.T) {
	for _, runtimeDir := range []bool{false, true} {
		name := "socket beside the cache"
		if runtimeDir {
			name = "socket in XDG_RUNTIME_DIR"
		}
		t.Run(name, func(t *testing.T) {
			dir := shortTemp(t)
			env := cliEnv(dir)
			if runtimeDir {
				env["XDG_RUNTIME_DIR"] = shortTemp(t)
			}
			ctx := context.Background()
			code, out, errs := runEnv(t, ctx, env, nil, false, "test-reservation", "--approve", "--json")
			if code != 0 {
				t.Fatalf("test-reservation: exit %d %s %s", code, out, errs)
			}
			number := decodeJSON[map[string]any](t, out)["target"].(string)
			cache := filepath.Join(dir, "paydesk", "paydesk.db")
			cmds := []struct {
				args  []string
				stdin string
			}{
				{args: []string{"reservations"}},
				{args: []string{"reservations", "--json"}},
				{args: []string{"reservations", "--state", "reserved", "-q"}},
				{args: []string{"show", number}},
				{args: []string{"show", number, "--db", cache}},
				{args: []string{"show", "NOPE"}},
				{args: []string{"transactions", "--json"}},
				{args: []string{"pushes"}},
				{args: []string{"audit"}},
				{args: []string{"audit", "--verify"}},
				{args: []string{"reservations", "--state", "partly"}},     // a usage error: exit 2
				{args: []string{"capture", number, "SHOE-42=9", "--yes"}}, // refused before sending
				{args: []string{"cancel", number}},                        // no terminal, no --yes: nothing sent
				{args: []string{"refund", "NOKEY", "5", "--reason", "return", "--yes", "--json"}},
				{args: []string{"import", "-"}, stdin: "not,a,header\n"},
				{args: []string{"resolve", "999", "--ask"}},
				{args: []string{"batch", "capture", filepath.Join("..", "..", "testdata", "batch", "shipments.csv"), "--dry-run"}},
				{args: []string{"batch", "capture", filepath.Join("..", "..", "testdata", "batch", "shipments.csv"), "--yes"}},
			}
			type result struct {
				code      int
				out, errs string
			}
			run := func() []result {
				var rs []result
				for _, c := range cmds {
					var in io.Reader
					if c.stdin != "" {
						in = strings.NewReader(c.stdin)
					}
					code, out, errs := runEnv(t, ctx, env, in, false, c.args...)
					rs = append(rs, result{code, elapsed.ReplaceAllString(out, "checked in …"), errs})
				}
				return rs
			}
			direct := run()
			h, srv := startOwner(t, env)
			through := run()
			for i, c := range cmds {
				if direct[i] != through[i] {
					t.Errorf("%q: through %s\n  exit %d stdout %q stderr %q\nby itself\n  exit %d stdout %q stderr %q",
						c.args, srv.Path(), through[i].code, through[i].out, through[i].errs, direct[i].code, direct[i].out, direct[i].errs)
				}
			}
			if runtimeDir && !strings.HasPrefix(srv.Path(), env["XDG_RUNTIME_DIR"]) {
				t.Errorf("socket %s, want it in XDG_RUNTIME_DIR", srv.Path())
			}
			if fi, err := os.Lstat(srv.Path()); err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
				t.Errorf("socket %s: %v %v, want a socket 0600", srv.Path(), fi.Mode(), err)
			}

			// Money moves on the owner's runtime, in the client's name.
			code, out, errs = runEnv(t, ctx, env, nil, false, "capture", number, "SHOE-42=1", "--yes", "--json")
			if res := decodeJSON[map[string]any](t, out); code != 0 || res["status"] != float64(190) || res["pushReceived"] != true {
				t.Fatalf("capture through the owner: exit %d %v %s", code, res, errs)
			}
			entries, err := h.db.Audit(ctx, 1)
			if err != nil || len(entries) != 1 || entries[0].Action != "capture" || entries[0].Operator != "clitest" {
				t.Fatalf("audit entry of the capture: %+v %v; want capture by clitest (the client), not ownerdesk", entries, err)
			}
			if h.rt.svc.Operator() != "ownerdesk" {
				t.Fatalf("the owner's own operator became %q", h.rt.svc.Operator())
			}
		})
	}
}

// TestThroughOwnerStdin: a command that reads its stdin gets the client's
// (a confirmation typed at the prompt, orders piped to import -), files
// named relative to the client's folder are found, and without a terminal
// a sending command still needs --yes.
func TestThroughOwnerStdin(t *testing.T) {
	dir := shortTemp(t)
	env := cliEnv(dir)
	ctx := context.Background()
	code, out, errs := runEnv(t, ctx, env, nil, false, "test-reservation", "--approve", "--json")
	if code != 0 {
		t.Fatalf("test-reservation: exit %d %s", code, errs)
	}
	number := decodeJSON[map[string]any](t, out)["target"].(string)
	startOwner(t, env)

	code, _, errs = runEnv(t, ctx, env, strings.NewReader("yes\n"), false, "cancel", number)
	if code != 1 || !strings.Contains(errs, "no terminal to ask on: pass --yes; nothing sent") {
		t.Fatalf("cancel without a terminal: exit %d %s", code, errs)
	}
	code, out, errs = runEnv(t, ctx, env, strings.NewReader("no\n"), true, "cancel", number)
	if code != 1 || !strings.Contains(errs, "Type yes to go ahead: ") || !strings.Contains(errs, "not confirmed; nothing sent") {
		t.Fatalf("cancel answered no: exit %d %s %s", code, out, errs)
	}
	code, out, errs = runEnv(t, ctx, env, strings.NewReader("yes\n"), true, "cancel", number)
	if code != 0 || !strings.Contains(errs, "Cancel the whole of reservation "+number+": 213.80 EUR") || !strings.Contains(out, "190") {
		t.Fatalf("cancel answered yes: exit %d %s %s", code, out, errs)
	}

	csv, err := os.ReadFile(filepath.Join("..", "..", "testdata", "webshop", "orders.csv"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = runEnv(t, ctx, env, nil, false, "import", filepath.Join("..", "..", "testdata", "webshop", "orders.csv"))
	if code != 0 || !strings.Contains(out, "2 orders imported") {
		t.Fatalf("import FILE (relative to the client's folder): exit %d %s %s", code, out, errs)
	}
	code, out, errs = runEnv(t, ctx, env, bytes.NewReader(csv), false, "import", "-")
	if code != 0 || !strings.Contains(out, "2 already known") {
		t.Fatalf("import - : exit %d %s %s", code, out, errs)
	}
}

// TestStaleSocketRunsDirectly: an owner killed without its cleanup leaves
// its socket; the next command finds nobody there, runs by itself and
// removes it.
func TestStaleSocketRunsDirectly(t *testing.T) {
	dir := shortTemp(t)
	env := cliEnv(dir)
	env["XDG_RUNTIME_DIR"] = shortTemp(t)
	ctx := context.Background()
	if code, _, errs := runEnv(t, ctx, env, nil, false, "test-reservation"); code != 0 {
		t.Fatalf("test-reservation: %s", errs)
	}
	cache := filepath.Join(dir, "paydesk", "paydesk.db")
	paths := socketPaths(cache, func(k string) string { return env[k] })
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
	}
	code, out, errs := runEnv(t, ctx, env, nil, false, "reservations", "-q")
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("reservations beside a stale socket: exit %d %q %s", code, out, errs)
	}
	for _, p := range paths {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("stale socket %s still there: %v", p, err)
		}
	}
}

// blockingStdin is a stdin that says when it is first read and then
// gives nothing until released.
type blockingStdin struct {
	once    sync.Once
	read    chan struct{}
	release chan struct{}
}

func (b *blockingStdin) Read([]byte) (int, error) {
	b.once.Do(func() { close(b.read) })
	<-b.release
	return 0, io.EOF
}

// TestClientGoneOwnerGoesOn: a client interrupted in the middle of a
// command (Ctrl-C) has the command interrupted in the owner, as it would be
// by itself, and hears how it ended; the owner goes on running the next
// ones. (A client whose connection drops: hub's TestClientGoesAway.)
func TestClientGoneOwnerGoesOn(t *testing.T) {
	dir := shortTemp(t)
	env := cliEnv(dir)
	if code, _, errs := runEnv(t, context.Background(), env, nil, false, "test-reservation", "--approve"); code != 0 {
		t.Fatalf("test-reservation: %s", errs)
	}
	startOwner(t, env)
	stdin := &blockingStdin{read: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(stdin.release) })
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		code int
		errs string
	}
	done := make(chan result, 1)
	go func() {
		code, _, errs := runEnv(t, ctx, env, stdin, false, "import", "-")
		done <- result{code, errs}
	}()
	select {
	case <-stdin.read: // the owner runs import and asked for the stdin
	case <-time.After(stuckAfter):
		t.Fatal("import - never read its stdin")
	}
	cancel()
	select {
	case r := <-done:
		if r.code != 1 || !strings.Contains(r.errs, "paydesk import: context canceled") {
			t.Fatalf("an interrupted import: exit %d %q", r.code, r.errs)
		}
	case <-time.After(stuckAfter):
		t.Fatal("the client did not end")
	}
	code, out, errs := runEnv(t, context.Background(), env, nil, false, "reservations", "--state", "reserved", "-q")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("the owner after a client went away: exit %d %q %s", code, out, errs)
	}
	number := strings.TrimSpace(out)
	if code, _, errs := runEnv(t, context.Background(), env, nil, false, "capture", number, "SHOE-42=1", "--yes"); code != 0 {
		t.Fatalf("capture after a client went away: exit %d %s", code, errs)
	}
}

// TestClientDropsOwnerGoesOn: a client whose connection drops in the
// middle of a command (killed, its terminal closed) — here `import -` with
// half a CSV sent — does not break the owner: the command ends, nothing of
// the half-sent order is kept, and the next commands run.
func TestClientDropsOwnerGoesOn(t *testing.T) {
	dir := shortTemp(t)
	env := cliEnv(dir)
	if code, _, errs := runEnv(t, context.Background(), env, nil, false, "test-reservation", "--approve"); code != 0 {
		t.Fatalf("test-reservation: %s", errs)
	}
	h, srv := startOwner(t, env)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", srv.Path())
	}}
	c := &http.Client{Transport: tr}
	body, _ := json.Marshal(hub.Request{Args: []string{"import", "-"}, Env: env, Dir: "/", Stdin: true})
	resp, err := c.Post("http://paydesk/run", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	frames := bufio.NewReader(resp.Body)
	var asked struct {
		Stdin string `json:"stdin"`
	}
	for asked.Stdin == "" {
		line, err := frames.ReadBytes('\n')
		if err != nil {
			t.Fatalf("the owner never asked for stdin: %v", err)
		}
		_ = json.Unmarshal(line, &asked)
	}
	pr, pw := io.Pipe()
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		if r, err := c.Post("http://paydesk/stdin/"+asked.Stdin, "text/csv", pr); err == nil {
			r.Body.Close()
		}
	}()
	if _, err := pw.Write([]byte("invoice,article_number,title,quantity,price,vat\nSHOP-1,MUG,Mug,1,")); err != nil {
		t.Fatal(err)
	}
	// The client goes: both connections close mid-command.
	resp.Body.Close()
	pw.CloseWithError(io.ErrUnexpectedEOF)
	tr.CloseIdleConnections()
	<-fed
	for deadline := time.Now().Add(stuckAfter); srv.Running() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command of a client that dropped still runs")
		}
	}

	code, out, errs := runEnv(t, context.Background(), env, nil, false, "reservations", "--state", "reserved", "-q")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("the owner after a client dropped: exit %d %q %s", code, out, errs)
	}
	if code, _, errs := runEnv(t, context.Background(), env, nil, false, "capture", strings.TrimSpace(out), "SHOE-42=1", "--yes"); code != 0 {
		t.Fatalf("capture after a client dropped: exit %d %s", code, errs)
	}
	if o, err := h.db.Order(t.Context(), "SHOP-1"); err == nil && o != nil {
		t.Fatalf("half an order was kept: %+v", o)
	}
}

// TestOwnerSaysWhatItCannotRun: a second owner of the cache, a form, and
// a command line that is not a command an owner runs are refused with who
// owns the cache and what to do.
func TestOwnerSaysWhatItCannotRun(t *testing.T) {
	dir := shortTemp(t)
	env := cliEnv(dir)
	ctx := context.Background()
	if code, _, errs := runEnv(t, ctx, env, nil, false, "test-reservation"); code != 0 {
		t.Fatalf("test-reservation: %s", errs)
	}
	h, _ := startOwner(t, env)
	code, _, errs := runEnv(t, ctx, env, nil, false, "serve")
	if code != 1 || !regexp.MustCompile(`paydesk serve \(pid \d+\) owns the cache .*paydesk serve does not`).MatchString(errs) {
		t.Errorf("a second serve: exit %d %s", code, errs)
	}
	code, _, errs = runEnv(t, ctx, env, strings.NewReader(""), true, "form", "test-reservation")
	if code != 1 || !strings.Contains(errs, "form cannot run through it") {
		t.Errorf("form: exit %d %s", code, errs)
	}
	for _, args := range [][]string{{"serve"}, {"listen"}, {"--demo"}} {
		var out, errb bytes.Buffer
		code := h.run(ctx, hub.Request{Args: args, Dir: "/"}, hub.Streams{Stdout: &out, Stderr: &errb})
		if code != 1 || !strings.Contains(errb.String(), "paydesk serve owns this cache and runs commands for others on this machine, not") {
			t.Errorf("%q sent to the owner: exit %d %s", args, code, errb.String())
		}
	}
	// Settings that do not match the owner's runtime are named.
	code, _, errs = runEnv(t, ctx, env, nil, false, "test-reservation", "--gateway", "http://127.0.0.1:9/")
	if code != 1 || !strings.Contains(errs, "works with gateway sandbox") {
		t.Errorf("another gateway: exit %d %s", code, errs)
	}
}

// TestThroughListener: paydesk listen owns its cache too; the commands
// that read it run through it (they failed before), and one that needs a
// gateway says the listener cannot run it.
func TestThroughListener(t *testing.T) {
	dir := shortTemp(t)
	env := cliEnv(dir)
	env["PAYDESK_SECRET_KEY"] = "s3cret"
	dbPath := filepath.Join(dir, "listen.db")
	var stderr lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, IO{Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
			[]string{"listen", "--addr", "127.0.0.1:0", "--website-key", "WK", "--db", dbPath})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	awaitListening(t, &stderr)
	if !strings.Contains(stderr.String(), "(commands on this cache run through it)") {
		t.Fatalf("listen banner without its socket: %s", stderr.String())
	}
	code, out, errs := runEnv(t, context.Background(), env, nil, false, "reservations", "--db", dbPath)
	if code != 0 || out != "RESERVATION  INVOICE  STATE  AMOUNT  CAPTURED  REMAINING  DAYS  CUSTOMER\n0 reservations\n" {
		t.Fatalf("reservations through the listener: exit %d %q %s", code, out, errs)
	}
	code, _, errs = runEnv(t, context.Background(), env, nil, false, "test-reservation", "--db", dbPath)
	if code != 1 || !strings.Contains(errs, "paydesk listen owns this cache: it runs the commands that read the cache and import, and test-reservation needs a gateway") {
		t.Fatalf("test-reservation through the listener: exit %d %s", code, errs)
	}
}

// TestREADMETryThemWithOwner runs the README's "Try them" block, line by
// line as the shell would ($(…) with head -n 1, "$RES" and "$CAP"), while
// an owner holds the cache, as with the console open in another window.
// Every line exits 0 (before the owner had a socket each failed: the cache
// is in use by another paydesk process).
func TestREADMETryThemWithOwner(t *testing.T) {
	lines, _ := shellBlocks(t, filepath.Join("..", "..", "README.md"))
	first, last := -1, -1
	for i, l := range lines {
		if l == "paydesk test-reservation --approve" && first < 0 {
			first = i
		}
		if first >= 0 && l == "paydesk audit" {
			last = i
			break
		}
	}
	if first < 0 || last < 0 {
		t.Fatal("the README's Try them block (paydesk test-reservation --approve … paydesk audit) is not there")
	}
	dir := shortTemp(t)
	env := cliEnv(dir)
	env["XDG_RUNTIME_DIR"] = shortTemp(t)
	startOwner(t, env)
	vars := map[string]string{}
	assign := regexp.MustCompile(`^([A-Z]+)=\$\((.*)\)$`)
	for _, line := range lines[first : last+1] {
		target, cmdline := "", line
		if m := assign.FindStringSubmatch(line); m != nil {
			target, cmdline = m[1], m[2]
		}
		firstOnly := strings.HasSuffix(cmdline, "| head -n 1")
		m := invocation.FindStringSubmatch(strings.TrimSuffix(cmdline, "| head -n 1"))
		if m == nil {
			t.Fatalf("%q: no paydesk command", line)
		}
		args := words(strings.TrimSpace(m[1]))
		for i, a := range args {
			if strings.HasPrefix(a, "$") {
				v, ok := vars[a[1:]]
				if !ok {
					t.Fatalf("%q: %s is not set by an earlier line", line, a)
				}
				args[i] = v
			}
		}
		code, out, errs := runEnv(t, context.Background(), env, nil, false, args...)
		if code != 0 {
			t.Fatalf("%q with an owner: exit %d\n%s%s", line, code, out, errs)
		}
		if target != "" {
			if firstOnly {
				out, _, _ = strings.Cut(out, "\n")
			}
			if vars[target] = strings.TrimSpace(out); vars[target] == "" {
				t.Fatalf("%q: %s is empty", line, target)
			}
		}
	}
	if len(vars) != 2 {
		t.Fatalf("variables set: %v, want RES and CAP", vars)
	}
}

// BenchmarkThroughOwner: one look command (reservations -q on a cache of
// one reservation) run by itself, which opens and checks the cache, and
// through an owner's socket, which finds the owner, sends the argv and
// streams the answer back.
func BenchmarkThroughOwner(b *testing.B) {
	dir, err := os.MkdirTemp("", "pd")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	env := cliEnv(dir)
	getenv := func(k string) string { return env[k] }
	run := func(b *testing.B, args ...string) {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), IO{Stdout: &out, Stderr: &errb, Getenv: getenv}, args); code != 0 {
			b.Fatalf("%q: exit %d %s", args, code, errb.String())
		}
	}
	run(b, "test-reservation")
	b.Run("by itself", func(b *testing.B) {
		for b.Loop() {
			run(b, "reservations", "-q")
		}
	})
	set, err := resolveSettings(nil, getenv)
	if err != nil {
		b.Fatal(err)
	}
	rt, err := start(context.Background(), set, getenv)
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	srv, err := (&host{what: "the benchmark", rt: rt, db: rt.db, set: rt.set, getenv: getenv}).serve()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	b.Run("through the owner", func(b *testing.B) {
		for b.Loop() {
			run(b, "reservations", "-q")
		}
	})
}

// TestServeCommand: paydesk serve owns the cache until it is stopped,
// says where its socket is, runs the commands of this machine through it,
// and leaves no socket behind.
func TestServeCommand(t *testing.T) {
	dir := shortTemp(t)
	env := cliEnv(dir)
	env["XDG_RUNTIME_DIR"] = shortTemp(t)
	var stderr lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, IO{Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}, []string{"serve", "--listen", "127.0.0.1:0"})
	}()
	socket := regexp.MustCompile(`socket: +(\S+\.sock) \(the commands on this machine run through it\)`)
	var path string
	for deadline := time.Now().Add(stuckAfter); path == ""; time.Sleep(5 * time.Millisecond) {
		if m := socket.FindStringSubmatch(stderr.String()); m != nil {
			path = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no socket: %s", stderr.String())
		}
	}
	for _, want := range []string{"paydesk serve: owns " + filepath.Join(dir, "paydesk", "paydesk.db"), "(the embedded sandbox), mode sandbox", "push listener:  http://127.0.0.1:", "operator:       clitest"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("banner lacks %q: %s", want, stderr.String())
		}
	}
	code, out, errs := runEnv(t, context.Background(), env, nil, false, "test-reservation", "--approve", "--json")
	if code != 0 || !strings.Contains(out, `"status": 190`) {
		t.Fatalf("test-reservation through serve: exit %d %s %s", code, out, errs)
	}
	cancel()
	if code := <-done; code != 0 || !strings.HasSuffix(stderr.String(), "paydesk serve: stopped\n") {
		t.Fatalf("serve stopped with exit %d: %s", code, stderr.String())
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("serve left its socket %s: %v", path, err)
	}
	code, out, _ = runEnv(t, context.Background(), env, nil, false, "reservations", "-q")
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("after serve: exit %d %q", code, out)
	}
}

// TestOwnerRunsCommandsAtOnce: commands of several clients run at once on
// one owner's runtime (as beside a console in use): looks and sends
// side by side, each with its own output, under the race detector.
func TestOwnerRunsCommandsAtOnce(t *testing.T) {
	dir := shortTemp(t)
	env := cliEnv(dir)
	ctx := context.Background()
	var numbers []string
	for range 2 {
		code, out, errs := runEnv(t, ctx, env, nil, false, "test-reservation", "--approve", "--json")
		if code != 0 {
			t.Fatalf("test-reservation: %s", errs)
		}
		numbers = append(numbers, decodeJSON[map[string]any](t, out)["target"].(string))
	}
	h, _ := startOwner(t, env)
	var wg sync.WaitGroup
	errc := make(chan string, 16)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, errs := runEnv(t, ctx, env, nil, false, "reservations", "-q")
			if code != 0 || strings.Count(out, "\n") != 2 {
				errc <- fmt.Sprintf("reservations %d: exit %d %q %s", i, code, out, errs)
			}
		}()
	}
	for _, n := range numbers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, errs := runEnv(t, ctx, env, nil, false, "capture", n, "SHOE-42=1", "--yes")
			if code != 0 || !strings.HasPrefix(out, "Capture "+n+": 190") {
				errc <- fmt.Sprintf("capture %s: exit %d %q %s", n, code, out, errs)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for e := range errc {
		t.Error(e)
	}
	for _, n := range numbers {
		r, err := h.db.Reservation(ctx, n)
		if err != nil || r.CapturedAmount.StringFixed(2) != "59.95" {
			t.Errorf("reservation %s after its capture: %v %v", n, r, err)
		}
	}
}
