package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"paydesk/api"
	"paydesk/internal/pushload"
)

func main() {
	bin := flag.String("paydesk", "", "the paydesk binary (go build -o /tmp/paydesk .)")
	old := flag.String("old", "", "a second paydesk binary measured in the same rounds (before a change)")
	db := flag.String("db", "", "the cache each serve process gets a copy of (store/storetest/gen -n 2000)")
	consoles := flag.Int("consoles", 50, "consoles over SSH beside the listener")
	rounds := flag.Int("rounds", 4, "rounds: every target once per round, in rotating order")
	pushes := flag.Int("n", 4000, "pushes per target and round")
	senders := flag.Int("c", 8, "parallel push senders, one connection each")
	cols := flag.Int("cols", 100, "the consoles' terminal width")
	rows := flag.Int("rows", 30, "the consoles' terminal height")
	emulate := flag.Bool("emulate", false, "the clients feed every frame into a terminal emulator instead of discarding it")
	clients := flag.Int("clients", 0, "client mode (started by the command itself): hold this many consoles over SSH")
	addr := flag.String("addr", "", "client mode: the SSH server's host:port")
	key := flag.String("key", "", "client mode: the private key file")
	user := flag.String("user", "alice", "client mode: the user")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	if *clients > 0 {
		err = runClients(ctx, clientPlan{n: *clients, addr: *addr, key: *key, user: *user, cols: *cols, rows: *rows, emulate: *emulate})
	} else {
		if *bin == "" || *db == "" {
			fmt.Fprintln(os.Stderr, "usage: sshload -paydesk BINARY -db CACHE [-old BINARY] [-consoles 50] [-rounds 4] [-n 2000]")
			os.Exit(2)
		}
		bins := []string{*bin}
		if *old != "" {
			bins = append(bins, *old)
		}
		err = runDriver(ctx, plan{bins: bins, db: *db, consoles: *consoles, rounds: *rounds, pushes: *pushes, senders: *senders,
			cols: *cols, rows: *rows, emulate: *emulate})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sshload: %v\n", err)
		os.Exit(1)
	}
}

type plan struct {
	bins                                          []string
	db                                            string
	consoles, rounds, pushes, senders, cols, rows int
	emulate                                       bool
}

// target is one serve process, with or without its consoles' process.
type target struct {
	name      string
	consoles  int
	serve     *exec.Cmd
	clients   *exec.Cmd
	toClients io.WriteCloser
	fromCl    *bufio.Reader
	listen    string // the push listener's host:port
	creds     api.Credentials
	next      int // the next push's number

	runs      []pushload.Result
	cpu, tail []time.Duration // the serve process's CPU during each round, and after it until quiet
	clCPU     []time.Duration // the clients' CPU per round, tail included
	bytes     []int64         // what the consoles read per round, tail included
	idle      []float64       // the serve process's share of a core at rest, before each round
}

func runDriver(ctx context.Context, p plan) error {
	dir, err := os.MkdirTemp("", "sshload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	keyFile, pubFile, err := writeKey(dir)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var targets []*target
	defer func() {
		for _, t := range targets {
			t.stop()
		}
	}()
	for _, bin := range p.bins {
		for _, n := range []int{0, p.consoles} {
			name := fmt.Sprintf("%s, %d consoles", filepath.Base(bin), n)
			fmt.Fprintf(os.Stderr, "sshload: starting %s\n", name)
			t, err := startTarget(ctx, name, bin, self, filepath.Join(dir, fmt.Sprint(len(targets))), keyFile, pubFile, n, p)
			if t != nil {
				targets = append(targets, t)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	// The consoles' first loads are not a round's.
	for _, t := range targets {
		if _, err := quiet(ctx, t.serve.Process.Pid, 0); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	fmt.Fprintf(os.Stderr, "sshload: load average %s; %d rounds of %d pushes from %d senders to each of %d targets\n",
		loadAverage(), p.rounds, p.pushes, p.senders, len(targets))
	for round := range p.rounds {
		for i := range targets {
			t := targets[(round+i)%len(targets)]
			if err := t.round(ctx, p); err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			k := len(t.runs) - 1
			fmt.Fprintf(os.Stderr, "  round %d  %-36s %6.0f pushes/s  p99 %7.2f ms  serve %5.0f µs a push (+%4.0f after)  idle %3.0f %%  clients %5.0f µs  %6.0f B a push\n",
				round+1, t.name, t.runs[k].PerSecond(), ms(t.runs[k].Percentile(99)), perPush(t.cpu[k], p.pushes), perPush(t.tail[k], p.pushes), 100*t.idle[k],
				perPush(t.clCPU[k], p.pushes), float64(t.bytes[k])/float64(p.pushes))
		}
	}
	report(targets, p)
	fmt.Printf("load average at the end: %s\n", loadAverage())
	return nil
}

func startTarget(ctx context.Context, name, bin, self, dir, keyFile, pubFile string, consoles int, p plan) (*target, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cache := filepath.Join(dir, "cache.db")
	if err := pushload.CopyFile(p.db, cache); err != nil {
		return nil, err
	}
	// The embedded sandbox's credentials are a secret beside the cache:
	// written here, the pushes can be signed with it.
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	creds := api.Credentials{WebsiteKey: "PAYDESKEMBEDDED", SecretKey: hex.EncodeToString(raw)}
	if err := os.WriteFile(filepath.Join(dir, "sandbox.secret"), []byte(creds.SecretKey), 0o600); err != nil {
		return nil, err
	}
	// No sync with the gateway: its round of every invoice (at the start
	// and each 15 minutes) would fall into some rounds and not others.
	if err := os.MkdirAll(filepath.Join(dir, "paydesk"), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "paydesk", "config.toml"), []byte("sync-every = \"0\"\n"), 0o600); err != nil {
		return nil, err
	}
	env := append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_RUNTIME_DIR="+dir, "HOME="+dir, "USER=sshload",
		"PAYDESK_DB=", "PAYDESK_GATEWAY=", "PAYDESK_CONFIG=")
	add := exec.CommandContext(ctx, bin, "user", "add", "alice", "--key", pubFile, "--role", "agent", "--db", cache)
	add.Env = env
	if out, err := add.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("user add: %w: %s", err, out)
	}
	serve := exec.Command(bin, "serve", "--db", cache, "--ssh", "127.0.0.1:0")
	serve.Env = env
	out, err := os.Create(filepath.Join(dir, "serve.out"))
	if err != nil {
		return nil, err
	}
	serve.Stdout = out
	stderr, err := serve.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := serve.Start(); err != nil {
		return nil, err
	}
	t := &target{name: name, consoles: consoles, serve: serve, creds: creds, next: 1}
	banner, err := awaitBanner(stderr, filepath.Join(dir, "serve.err"))
	if err != nil {
		return t, err
	}
	t.listen = banner["listen"]
	if consoles == 0 {
		return t, nil
	}
	args := []string{"-clients", fmt.Sprint(consoles), "-addr", banner["ssh"], "-key", keyFile, "-cols", fmt.Sprint(p.cols), "-rows", fmt.Sprint(p.rows)}
	if p.emulate {
		args = append(args, "-emulate")
	}
	cl := exec.Command(self, args...)
	cl.Stderr = os.Stderr
	if t.toClients, err = cl.StdinPipe(); err != nil {
		return t, err
	}
	clOut, err := cl.StdoutPipe()
	if err != nil {
		return t, err
	}
	if err := cl.Start(); err != nil {
		return t, err
	}
	t.clients, t.fromCl = cl, bufio.NewReader(clOut)
	line, err := t.fromCl.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		return t, fmt.Errorf("the clients did not get ready: %q %v", line, err)
	}
	return t, nil
}

// awaitBanner reads serve's banner for its push listener's and SSH
// server's addresses, then copies the rest of its stderr to a file.
func awaitBanner(r io.Reader, rest string) (map[string]string, error) {
	res := map[string]*regexp.Regexp{
		"listen": regexp.MustCompile(`push listener:\s+http://(\S+)/push`),
		"ssh":    regexp.MustCompile(`ssh:\s+(\S+)`),
	}
	found := make(chan map[string]string, 1)
	go func() {
		got := map[string]string{}
		var seen []string
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			seen = append(seen, sc.Text())
			for k, re := range res {
				if m := re.FindStringSubmatch(sc.Text()); m != nil {
					got[k] = m[1]
				}
			}
			if strings.HasPrefix(sc.Text(), "Ctrl-C stops it") {
				break
			}
		}
		if len(got) < len(res) {
			got["err"] = strings.Join(seen, "\n")
		}
		found <- got
		if f, err := os.Create(rest); err == nil {
			_, _ = io.Copy(f, r)
			f.Close()
		} else {
			_, _ = io.Copy(io.Discard, r)
		}
	}()
	select {
	case got := <-found:
		if e, bad := got["err"]; bad {
			return nil, fmt.Errorf("no push listener and ssh address in serve's banner:\n%s", e)
		}
		return got, nil
	case <-time.After(time.Minute):
		return nil, errors.New("serve printed no banner within a minute")
	}
}

// round sends one round of pushes to t, then waits until its serve
// process is quiet again.
func (t *target) round(ctx context.Context, p plan) error {
	reqs, err := pushload.Prepare(pushload.Plan{Addr: t.listen, Credentials: t.creds, Pushes: p.pushes, First: t.next})
	if err != nil {
		return err
	}
	t.next += p.pushes
	cl0, b0, err := t.clientStat()
	if err != nil {
		return err
	}
	idle, err := idleRate(ctx, t.serve.Process.Pid)
	if err != nil {
		return err
	}
	t.idle = append(t.idle, idle)
	cpu0 := pushload.ProcCPU(t.serve.Process.Pid)
	res, err := pushload.Run(ctx, t.listen, reqs, p.senders)
	cpu1 := pushload.ProcCPU(t.serve.Process.Pid)
	if err != nil {
		return err
	}
	if res.Statuses[http.StatusOK] != p.pushes {
		return fmt.Errorf("answers %v; want %d × 200", res.Statuses, p.pushes)
	}
	cpu2, err := quiet(ctx, t.serve.Process.Pid, idle)
	if err != nil {
		return err
	}
	cl1, b1, err := t.clientStat()
	if err != nil {
		return err
	}
	t.runs = append(t.runs, res)
	// What idling took meanwhile is not the pushes' cost.
	t.cpu = append(t.cpu, cpu1-cpu0-time.Duration(idle*float64(res.Elapsed)))
	t.tail = append(t.tail, cpu2-cpu1)
	t.clCPU = append(t.clCPU, cl1-cl0)
	t.bytes = append(t.bytes, b1-b0)
	return nil
}

// idleRate is what pid uses of a core at rest (consoles open and idle
// tick and redraw their clocks), over two seconds.
func idleRate(ctx context.Context, pid int) (float64, error) {
	const span = 2 * time.Second
	c0, t0 := pushload.ProcCPU(pid), time.Now()
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(span):
	}
	return float64(pushload.ProcCPU(pid)-c0) / float64(time.Since(t0)), nil
}

// quiet waits until pid is back to its idle rate (within 5 % of a core)
// for calmFor, or steady at another (two seconds alike within 3 %: the
// idle cost grows with the data) as long, and returns its CPU then less
// what idling took meanwhile. calmFor outlasts the consoles' longest
// gathering of a stream (3 s): a console still gathering is calm, and its
// last reload would otherwise fall after the round's count.
func quiet(ctx context.Context, pid int, idle float64) (time.Duration, error) {
	const window = time.Second
	const calmFor = 4
	tick := time.NewTicker(window)
	defer tick.Stop()
	start := time.Now()
	last := pushload.ProcCPU(pid)
	prev := -1.0
	calm := 0
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
		now := pushload.ProcCPU(pid)
		rate := float64(now-last) / float64(window)
		if rate <= idle+0.05 || (time.Since(start) >= 3*window && math.Abs(rate-prev) <= 0.03) {
			calm++
		} else {
			calm = 0
		}
		if calm >= calmFor {
			return now - time.Duration(idle*float64(time.Since(start))), nil
		}
		prev = rate
		if time.Since(start) > 2*time.Minute {
			return 0, errors.New("the serve process was still busy two minutes after the round")
		}
		last = now
	}
}

// clientStat asks the clients' process for the bytes its consoles read
// so far, and reads its CPU.
func (t *target) clientStat() (time.Duration, int64, error) {
	if t.clients == nil {
		return 0, 0, nil
	}
	if _, err := io.WriteString(t.toClients, "stat\n"); err != nil {
		return 0, 0, fmt.Errorf("the clients: %w", err)
	}
	line, err := t.fromCl.ReadString('\n')
	if err != nil {
		return 0, 0, fmt.Errorf("the clients: %w", err)
	}
	var n int64
	if _, err := fmt.Sscanf(line, "stat %d", &n); err != nil {
		return 0, 0, fmt.Errorf("the clients said %q", line)
	}
	return pushload.ProcCPU(t.clients.Process.Pid), n, nil
}

func (t *target) stop() {
	if t.clients != nil {
		_ = t.toClients.Close()
		_ = t.clients.Wait()
	}
	_ = t.serve.Process.Signal(syscall.SIGTERM)
	_ = t.serve.Wait()
}

func report(targets []*target, p plan) {
	fmt.Printf("| target | pushes/s (each round) | median | p50 | p99 | serve CPU a push: round + after (median) | serve idle | clients' CPU a push | SSH bytes a push |\n|---|---|---|---|---|---|---|---|---|\n")
	medians := map[*target]float64{}
	for _, t := range targets {
		var rates, p50, p99, cpu, tail, cl, by, idle []float64
		for i, r := range t.runs {
			rates = append(rates, r.PerSecond())
			p50 = append(p50, ms(r.Percentile(50)))
			p99 = append(p99, ms(r.Percentile(99)))
			cpu = append(cpu, perPush(t.cpu[i], p.pushes))
			tail = append(tail, perPush(t.tail[i], p.pushes))
			cl = append(cl, perPush(t.clCPU[i], p.pushes))
			by = append(by, float64(t.bytes[i])/float64(p.pushes))
			idle = append(idle, 100*t.idle[i])
		}
		each := make([]string, len(rates))
		for i, r := range rates {
			each[i] = fmt.Sprintf("%.0f", r)
		}
		medians[t] = median(rates)
		fmt.Printf("| %s | %s | %.0f | %.1f–%.1f ms | %.1f–%.1f ms | %.0f + %.0f µs | %.0f %% of a core | %.0f µs | %.0f B |\n", t.name, strings.Join(each, " · "), medians[t],
			slices.Min(p50), slices.Max(p50), slices.Min(p99), slices.Max(p99), median(cpu), median(tail), median(idle), median(cl), median(by))
	}
	fmt.Println()
	for i := 0; i+1 < len(targets); i += 2 {
		none, with := targets[i], targets[i+1]
		var kept []string
		for r := range none.runs {
			kept = append(kept, fmt.Sprintf("%.0f %%", 100*with.runs[r].PerSecond()/none.runs[r].PerSecond()))
		}
		fmt.Printf("%s keeps %.0f %% of the pushes/s beside none (medians; each round: %s)\n", with.name, 100*medians[with]/medians[none], strings.Join(kept, ", "))
	}
}

// writeKey makes the consoles' user's key pair: the private key for the
// clients, the public one for paydesk user add.
func writeKey(dir string) (string, string, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	block, err := gossh.MarshalPrivateKey(priv, "sshload")
	if err != nil {
		return "", "", err
	}
	sshPub, err := gossh.NewPublicKey(pub)
	if err != nil {
		return "", "", err
	}
	keyFile, pubFile := filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "id_ed25519.pub")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(pubFile, gossh.MarshalAuthorizedKey(sshPub), 0o600); err != nil {
		return "", "", err
	}
	return keyFile, pubFile, nil
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func perPush(d time.Duration, pushes int) float64 { return float64(d.Microseconds()) / float64(pushes) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
