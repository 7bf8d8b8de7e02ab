// Command pushload sends signed gift card pushes to a running push
// listener (paydesk listen) from parallel keep-alive connections and
// prints the rate and latencies it answered with:
//
//	PAYDESK_SECRET_KEY=s3cret go run ./internal/pushload/cmd/pushload -addr 127.0.0.1:8801 -website-key KEY
//
// It also runs the two baselines the listener is measured against, each
// in a process of its own: a net/http server that answers 200 and does
// nothing else (-serve noop), and a plain net/http + bbolt.Batch receiver
// (-serve plain -db FILE). -compare runs all three side by side, in
// alternating rounds, against the real binary:
//
//	go build -o /tmp/paydesk . && go run ./internal/pushload/cmd/pushload -compare -paydesk /tmp/paydesk
//
// Beside each target's rate and latencies it reports the CPU per push its
// processes spent (utime+stime from /proc/PID/stat, before and after each
// round) and the disk per push at the end (the bbolt file's blocks on
// disk; on PostgreSQL the database's size, less what it held before). With -pg URL it
// adds a fourth target: two paydesk listen processes into that one
// (empty) PostgreSQL database, the load split between them:
//
//	pushload -compare -paydesk /tmp/paydesk -pg postgres://…/pushload
//
// After each round of a PostgreSQL target it waits until the push inbox is
// applied, so that the applier does not take the next target's CPU, and
// prints how long that took, the server's CPU a push (its processes' from
// /proc, when it runs here) and the WAL a push (pg_current_wal_lsn), at
// ingest and with the apply. -pg-old OTHER adds two listen of another
// paydesk binary into a new database NAME_old beside -pg's NAME on the
// same server, side by side in the same rounds (before and after a change).
//
// -old OTHER adds another paydesk binary's listen on a file of its own,
// side by side in the same rounds (a write path before and after a
// change).
//
// -forward adds paydesk listen --forward-to a local shop that answers 200
// (the outbox's cost), and -forward-old OTHER the same with another
// paydesk binary, side by side in the same rounds (before and after a
// change). After each forwarding round it waits until the shop has every
// push, so that deliveries still under way do not slow the next target,
// and prints how long that took and the CPU a push counted until then
// ("with the deliveries": a worker that yields to a burst spends it after
// the last answer).
//
// -attack SHAPE holds -conns connections of that shape to a running
// listener (one-byte, tls-prefix, slow-body, big-body; each dialled again
// when the listener closes it) for -duration while a probe posts one
// signed push every 200 ms on a new connection, and prints how many were
// answered within 2 s; with -pid it also reports the listener's peak RSS:
//
//	PAYDESK_SECRET_KEY=s3cret pushload -attack one-byte -conns 5000 -addr 127.0.0.1:8801 -website-key KEY -pid PID
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	bolt "go.etcd.io/bbolt"

	"paydesk/api"
	"paydesk/internal/pushload"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8801", "the listener's host:port (with -serve: the address to listen on)")
	pushURL := flag.String("push-url", "", "URL the pushes are signed over and posted to (default http://ADDR/push)")
	websiteKey := flag.String("website-key", "", "website key to sign with (the secret comes from $PAYDESK_SECRET_KEY)")
	pushes := flag.Int("n", 100000, "pushes to send (with -compare: per target and round)")
	senders := flag.Int("c", 128, "parallel senders, one connection each")
	randomKeys := flag.Bool("random-keys", false, "random transaction keys instead of rising ones")
	serve := flag.String("serve", "", "run a baseline instead of sending: noop or plain")
	dbPath := flag.String("db", "", "with -serve plain: the bbolt file")
	compare := flag.Bool("compare", false, "run paydesk listen and both baselines and measure them side by side")
	paydesk := flag.String("paydesk", "", "with -compare: the paydesk binary")
	pgURL := flag.String("pg", "", "with -compare: also two paydesk listen into this (empty) PostgreSQL database")
	pgOld := flag.String("pg-old", "", "with -compare -pg: also two listen of this other paydesk binary into a new database NAME_old beside -pg's, side by side (before and after a change)")
	forward := flag.Bool("forward", false, "with -compare: also run paydesk listen --forward-to a local receiver that answers 200 (the outbox's cost)")
	old := flag.String("old", "", "with -compare: also run this other paydesk binary's listen on a file of its own, side by side (a write path before and after a change)")
	forwardOld := flag.String("forward-old", "", "with -compare -forward: also run this other paydesk binary's listen --forward-to, side by side (an outbox before and after a change)")
	rounds := flag.Int("rounds", 3, "with -compare: rounds (each target once per round, in rotating order)")
	attack := flag.String("attack", "", "hold connections of this shape while probing: one-byte, tls-prefix, slow-body or big-body")
	conns := flag.Int("conns", 5000, "with -attack: connections held")
	duration := flag.Duration("duration", 30*time.Second, "with -attack: how long the attack is held")
	probeEvery := flag.Duration("probe-every", 200*time.Millisecond, "with -attack: a signed push on a new connection this often")
	useTLS := flag.Bool("tls", false, "with -attack: the listener serves HTTPS (its certificate is not checked)")
	pid := flag.Int("pid", 0, "with -attack: the listener's process ID, to report its peak RSS")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch {
	case *serve != "":
		err = runBaseline(ctx, *serve, *addr, *dbPath)
	case *compare:
		err = runCompare(ctx, comparePlan{paydesk: *paydesk, pg: *pgURL, pgOld: *pgOld, pushes: *pushes, senders: *senders, rounds: *rounds, randomKeys: *randomKeys, forward: *forward, forwardOld: *forwardOld, old: *old})
	case *attack != "":
		err = runAttack(ctx, attackPlan{addr: *addr, websiteKey: *websiteKey, shape: pushload.Shape(*attack), conns: *conns,
			duration: *duration, every: *probeEvery, tls: *useTLS, pid: *pid})
	default:
		err = runSend(ctx, *addr, *pushURL, *websiteKey, *pushes, *senders, *randomKeys)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pushload: %v\n", err)
		os.Exit(1)
	}
}

func runSend(ctx context.Context, addr, pushURL, websiteKey string, pushes, senders int, randomKeys bool) error {
	secret := os.Getenv("PAYDESK_SECRET_KEY")
	if websiteKey == "" || secret == "" {
		fmt.Fprintln(os.Stderr, "pushload: needs -website-key and $PAYDESK_SECRET_KEY (the listener's credentials)")
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "pushload: signing %d pushes...\n", pushes)
	reqs, err := pushload.Prepare(pushload.Plan{Addr: addr, PushURL: pushURL, Pushes: pushes, RandomKeys: randomKeys,
		// Numbered from the clock, so a second run stores new pushes
		// rather than duplicates of the first run's.
		First:       int(time.Now().UnixMicro() % 1e15),
		Credentials: api.Credentials{WebsiteKey: websiteKey, SecretKey: secret}})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "pushload: sending from %d connections to %s...\n", senders, addr)
	res, runErr := pushload.Run(ctx, addr, reqs, senders)
	fmt.Printf("%d pushes answered of %d sent in %.2f s: %.0f pushes/s\n", len(res.Latencies), res.Sent, res.Elapsed.Seconds(), res.PerSecond())
	fmt.Printf("latency p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n",
		ms(res.Percentile(50)), ms(res.Percentile(90)), ms(res.Percentile(99)), ms(res.Percentile(100)))
	codes := make([]int, 0, len(res.Statuses))
	for c := range res.Statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	fmt.Print("answers:")
	for _, c := range codes {
		fmt.Printf("  %d × %d", res.Statuses[c], c)
	}
	fmt.Println()
	return runErr
}

// runBaseline serves one baseline until ctx ends, with the listener's
// timeouts; it prints "listening on http://ADDR" on stderr once bound.
func runBaseline(ctx context.Context, kind, addr, dbPath string) error {
	var h http.Handler
	switch kind {
	case "noop":
		h = pushload.NoopHandler()
	case "plain":
		if dbPath == "" {
			return errors.New("-serve plain needs -db FILE")
		}
		db, err := bolt.Open(dbPath, 0o600, nil)
		if err != nil {
			return err
		}
		defer db.Close()
		secret := os.Getenv("PAYDESK_SECRET_KEY")
		key := os.Getenv("PAYDESK_WEBSITE_KEY")
		if secret == "" || key == "" {
			return errors.New("-serve plain needs $PAYDESK_WEBSITE_KEY and $PAYDESK_SECRET_KEY")
		}
		if h, err = pushload.PlainReceiver(db, api.VerifierFor(api.Credentials{WebsiteKey: key, SecretKey: secret})); err != nil {
			return err
		}
	default:
		return fmt.Errorf("-serve %q: noop or plain", kind)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second, WriteTimeout: 15 * time.Second,
		IdleTimeout: 60 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	fmt.Fprintf(os.Stderr, "pushload %s: listening on http://%s\n", kind, ln.Addr())
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// target is one server under comparison, running in one or more child
// processes (two listeners into one database) that share its load.
type target struct {
	name  string
	addrs []string
	cmds  []*exec.Cmd
	runs  []pushload.Result
	cpu   []time.Duration // CPU of its processes, per round
	// cpuAll is, for a forwarding target, the CPU of its processes per
	// round until the shop had every push: a worker that yields to the
	// pushes spends the rest after the last answer, and cpu alone would
	// not count it.
	cpuAll []time.Duration
	lag    []time.Duration // for a forwarding target: the shop's last push after the last answer;
	// for PostgreSQL, the inbox applied after the last answer
	// inbox is a paydesk listen on a file, whose push inbox it applies
	// after the answers (cpuAll and lag: until the process went idle).
	inbox bool
	// pg is, for a PostgreSQL target, its database's URL and what each
	// round cost the server.
	pg       string
	pgRounds []pgRound
	// size is what it stores on disk now, in bytes (the file, or the
	// database grown since the start).
	size func() (int64, error)
}

// comparePlan is what -compare runs.
type comparePlan struct {
	paydesk, pg             string
	pgOld                   string // with pg: a second binary into a database of its own, side by side
	forwardOld              string // with forward: a second binary forwarding, side by side
	old                     string // a second binary's listen on a file, side by side
	pushes, senders, rounds int
	randomKeys, forward     bool
}

// runCompare starts paydesk listen and both baselines as child processes
// on fresh files (and, with a PostgreSQL URL, two paydesk listen into
// that database), then sends the same load to each in turn, rounds times,
// rotating the order so that no target always gets the machine's fast or
// slow minutes, and prints the figures and the ratios.
func runCompare(ctx context.Context, p comparePlan) error {
	if p.paydesk == "" {
		return errors.New("-compare needs -paydesk BINARY (go build -o /tmp/paydesk .)")
	}
	dir, err := os.MkdirTemp("", "pushload-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	creds := api.Credentials{WebsiteKey: "PUSHLOADCOMPARE", SecretKey: api.NewNonce()}
	env := append(os.Environ(), "PAYDESK_SECRET_KEY="+creds.SecretKey, "PAYDESK_WEBSITE_KEY="+creds.WebsiteKey)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	listenWith := func(bin, db string) *exec.Cmd {
		return exec.Command(bin, "listen", "--addr", "127.0.0.1:0", "--website-key", creds.WebsiteKey, "--db", db)
	}
	listen := func(db string) *exec.Cmd { return listenWith(p.paydesk, db) }
	// A bbolt file's disk is the blocks it has: bbolt grows a file by
	// extending it 16 MB past what it uses, and those bytes hold no
	// blocks until pages are written there.
	// paydesk's push inbox beside its cache (CACHE.inbox.0 and .1) is
	// its disk too.
	fileSize := func(path string) func() (int64, error) {
		return func() (int64, error) {
			var sum int64
			for i, p := range []string{path, path + ".inbox.0", path + ".inbox.1"} {
				fi, err := os.Stat(p)
				if i > 0 && errors.Is(err, os.ErrNotExist) {
					continue
				}
				if err != nil {
					return 0, err
				}
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					sum += st.Blocks * 512
				} else {
					sum += fi.Size()
				}
			}
			return sum, nil
		}
	}
	type spec struct {
		name string
		cmds []*exec.Cmd
		size func() (int64, error)
		pg   string // a PostgreSQL target's database
		// inbox: a paydesk listen on a file (target.inbox)
		inbox bool
	}
	specs := []spec{
		{"paydesk listen", []*exec.Cmd{listen(filepath.Join(dir, "listen.db"))}, fileSize(filepath.Join(dir, "listen.db")), "", true},
		{"plain net/http + bbolt.Batch", []*exec.Cmd{exec.Command(self, "-serve", "plain", "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "plain.db"))},
			fileSize(filepath.Join(dir, "plain.db")), "", false},
		{"no-op net/http", []*exec.Cmd{exec.Command(self, "-serve", "noop", "-addr", "127.0.0.1:0")}, nil, "", false},
	}
	if p.old != "" {
		specs = append(specs, spec{"paydesk listen (-old)", []*exec.Cmd{listenWith(p.old, filepath.Join(dir, "listen-old.db"))}, fileSize(filepath.Join(dir, "listen-old.db")), "", true})
	}
	var shopGot atomic.Int64 // pushes the shop was delivered
	if p.forward {
		shop, err := startShop(&shopGot)
		if err != nil {
			return err
		}
		defer shop.Close()
		fwd := listen(filepath.Join(dir, "forward.db"))
		fwd.Args = append(fwd.Args, "--forward-to", "http://"+shop.Addr().String()+"/push")
		specs = append(specs, spec{name: "paydesk listen --forward-to", cmds: []*exec.Cmd{fwd}, size: fileSize(filepath.Join(dir, "forward.db"))})
		if p.forwardOld != "" {
			old := listenWith(p.forwardOld, filepath.Join(dir, "forward-old.db"))
			old.Args = append(old.Args, "--forward-to", "http://"+shop.Addr().String()+"/push")
			specs = append(specs, spec{name: "paydesk listen --forward-to (-forward-old)", cmds: []*exec.Cmd{old}, size: fileSize(filepath.Join(dir, "forward-old.db"))})
		}
	}
	var server *pgServer
	if p.pg != "" {
		if server, err = newPGServer(ctx, p.pg); err != nil {
			return fmt.Errorf("-pg: %w", err)
		}
		pgSpec := func(name, bin, url string) (spec, error) {
			before, err := databaseSize(ctx, url)
			if err != nil {
				return spec{}, fmt.Errorf("-pg: %w", err)
			}
			return spec{name: name, cmds: []*exec.Cmd{listenWith(bin, url), listenWith(bin, url)}, pg: url, size: func() (int64, error) {
				n, err := databaseSize(context.Background(), url)
				return n - before, err
			}}, nil
		}
		s, err := pgSpec("2 × paydesk listen, PostgreSQL", p.paydesk, p.pg)
		if err != nil {
			return err
		}
		specs = append(specs, s)
		if p.pgOld != "" {
			cfg, err := pgx.ParseConfig(p.pg)
			if err != nil {
				return fmt.Errorf("-pg: %w", err)
			}
			oldURL, err := freshDatabase(ctx, p.pg, cfg.Database+"_old")
			if err != nil {
				return err
			}
			if s, err = pgSpec("2 × paydesk listen, PostgreSQL (-pg-old)", p.pgOld, oldURL); err != nil {
				return err
			}
			specs = append(specs, s)
		}
	}
	var targets []*target
	defer func() {
		for _, t := range targets {
			for _, c := range t.cmds {
				_ = c.Process.Signal(syscall.SIGTERM)
				_ = c.Wait()
			}
		}
	}()
	for n, s := range specs {
		t := &target{name: s.name, size: s.size, pg: s.pg, inbox: s.inbox}
		for i, c := range s.cmds {
			c.Env = env
			out, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d-%d.out", n, i)))
			if err != nil {
				return err
			}
			defer out.Close()
			c.Stdout = out // paydesk listen prints a line per push, as a user would keep it
			stderr, err := c.StderrPipe()
			if err != nil {
				return err
			}
			if err := c.Start(); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			t.cmds = append(t.cmds, c)
			addr, err := awaitAddress(stderr)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			t.addrs = append(t.addrs, addr)
		}
		targets = append(targets, t)
	}
	fmt.Fprintf(os.Stderr, "pushload: %d rounds of %d pushes from %d senders to each of %d targets\n", p.rounds, p.pushes, p.senders, len(targets))
	next := 1
	var forwarded int64 // pushes sent to the forwarding targets so far
	for round := range p.rounds {
		for i := range targets {
			t := targets[(round+i)%len(targets)]
			cpu0 := t.cpuTime()
			var pr pgRound
			var wal0 int64
			var srv0 time.Duration
			if t.pg != "" {
				if wal0, err = server.wal(ctx); err != nil {
					return fmt.Errorf("%s: %w", t.name, err)
				}
				srv0 = server.cpu()
			}
			res, err := t.send(ctx, creds, next, p)
			next += p.pushes
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			if res.Statuses[http.StatusOK] != p.pushes {
				return fmt.Errorf("%s answered %v", t.name, res.Statuses)
			}
			t.runs = append(t.runs, res)
			t.cpu = append(t.cpu, t.cpuTime()-cpu0)
			fmt.Fprintf(os.Stderr, "  round %d  %-32s %8.0f pushes/s  p99 %6.2f ms  %4.0f µs CPU a push\n", round+1, t.name, res.PerSecond(),
				ms(res.Percentile(99)), float64(t.cpu[len(t.cpu)-1].Microseconds())/float64(p.pushes))
			if t.pg != "" {
				wal1, err := server.wal(ctx)
				if err != nil {
					return fmt.Errorf("%s: %w", t.name, err)
				}
				pr.walIngest, pr.cpuIngest = wal1-wal0, server.cpu()-srv0
				took, ok := awaitInbox(ctx, t.pg)
				if !ok {
					return fmt.Errorf("%s: the inbox still had pushes waiting %.0f s after the last answer", t.name, took.Seconds())
				}
				wal2, err := server.wal(ctx)
				if err != nil {
					return fmt.Errorf("%s: %w", t.name, err)
				}
				pr.walAll, pr.cpuAll = wal2-wal0, server.cpu()-srv0
				t.pgRounds = append(t.pgRounds, pr)
				t.cpuAll = append(t.cpuAll, t.cpuTime()-cpu0)
				t.lag = append(t.lag, took)
				n := float64(p.pushes)
				fmt.Fprintf(os.Stderr, "           inbox applied %.2f s after the last answer; a push: %4.0f µs CPU with the apply, server %4.0f · %4.0f µs CPU, WAL %5.0f · %5.0f B (ingest · with the apply)\n",
					took.Seconds(), float64(t.cpuAll[len(t.cpuAll)-1].Microseconds())/n, float64(pr.cpuIngest.Microseconds())/n, float64(pr.cpuAll.Microseconds())/n,
					float64(pr.walIngest)/n, float64(pr.walAll)/n)
			}
			if t.inbox {
				took := awaitIdle(ctx, t)
				t.cpuAll = append(t.cpuAll, t.cpuTime()-cpu0)
				t.lag = append(t.lag, took)
				fmt.Fprintf(os.Stderr, "           idle (inbox applied) %.2f s after the last answer, %4.0f µs CPU a push with the apply\n",
					took.Seconds(), float64(t.cpuAll[len(t.cpuAll)-1].Microseconds())/float64(p.pushes))
			}
			if strings.Contains(t.name, "--forward-to") {
				forwarded += int64(p.pushes)
				took, ok := awaitShop(ctx, &shopGot, forwarded)
				if !ok {
					return fmt.Errorf("%s: the shop had %d of %d pushes a minute after the last was answered", t.name, shopGot.Load(), forwarded)
				}
				t.cpuAll = append(t.cpuAll, t.cpuTime()-cpu0)
				t.lag = append(t.lag, took)
				fmt.Fprintf(os.Stderr, "           every push at the shop %.2f s after the last answer, %4.0f µs CPU a push with the deliveries\n",
					took.Seconds(), float64(t.cpuAll[len(t.cpuAll)-1].Microseconds())/float64(p.pushes))
			}
		}
	}
	fmt.Printf("| target | pushes/s (each round) | median | p50 | p99 | CPU a push (median) | disk a push after %d |\n|---|---|---|---|---|---|---|\n", p.rounds*p.pushes)
	medians := map[string]float64{}
	for _, t := range targets {
		var rates, p50, p99 []float64
		for _, r := range t.runs {
			rates = append(rates, r.PerSecond())
			p50 = append(p50, ms(r.Percentile(50)))
			p99 = append(p99, ms(r.Percentile(99)))
		}
		each := make([]string, len(rates))
		for i, r := range rates {
			each[i] = fmt.Sprintf("%.0f", r)
		}
		medians[t.name] = median(rates)
		disk := "–"
		if t.size != nil {
			if n, err := t.size(); err == nil {
				disk = fmt.Sprintf("%.0f B", float64(n)/float64(p.rounds*p.pushes))
			} else {
				disk = err.Error()
			}
		}
		fmt.Printf("| %s | %s | %.0f | %.1f–%.1f ms | %.1f–%.1f ms | %.0f µs | %s |\n", t.name, strings.Join(each, " · "), medians[t.name],
			slices.Min(p50), slices.Max(p50), slices.Min(p99), slices.Max(p99), medianCPU(t.cpu, p.pushes), disk)
	}
	l, pl, n := medians[targets[0].name], medians[targets[1].name], medians[targets[2].name]
	fmt.Printf("\npaydesk listen: %.2f× the plain receiver (target ≥ 2), %.2f× the no-op server (target ≥ 0.5)\n", l/pl, l/n)
	plainCPU := medianCPU(targets[1].cpu, p.pushes)
	for _, t := range targets {
		if t.inbox {
			lag, all := seconds(t.lag), medianCPU(t.cpuAll, p.pushes)
			fmt.Printf("%s: %.0f µs CPU a push with the apply (median), %.2f× the plain receiver's %.0f µs (target ≤ 2); idle %.2f–%.2f s after the last answer\n",
				t.name, all, all/plainCPU, plainCPU, slices.Min(lag), slices.Max(lag))
		}
	}
	for _, t := range targets[3:] {
		switch m := medians[t.name]; {
		case strings.Contains(t.name, "--forward-to"):
			lag := seconds(t.lag)
			fmt.Printf("%s: %.0f pushes/s, %.1f %% fewer than without (target ≤ 10 %%); every push at the shop %.2f–%.2f s after the last answer; %.0f µs CPU a push with the deliveries (median)\n",
				t.name, m, 100*(1-m/l), slices.Min(lag), slices.Max(lag), medianCPU(t.cpuAll, p.pushes))
		case t.pg != "":
			var sIn, sAll []time.Duration
			var wIn, wAll []float64
			per := float64(p.pushes)
			for _, r := range t.pgRounds {
				sIn, sAll = append(sIn, r.cpuIngest), append(sAll, r.cpuAll)
				wIn, wAll = append(wIn, float64(r.walIngest)/per), append(wAll, float64(r.walAll)/per)
			}
			lag := seconds(t.lag)
			fmt.Printf("%s: %.0f pushes/s (target ≥ 10,000), %.2f× the no-op server, %.2f× the plain receiver; inbox applied %.2f–%.2f s after the last answer; a push (medians): listeners %.0f µs CPU with the apply, server %.0f µs CPU at ingest and %.0f µs with the apply, WAL %.0f B at ingest and %.0f B with the apply\n",
				t.name, m, m/n, m/pl, slices.Min(lag), slices.Max(lag), medianCPU(t.cpuAll, p.pushes), medianCPU(sIn, p.pushes), medianCPU(sAll, p.pushes), median(wIn), median(wAll))
		default: // -old: another binary's listen on a file
			fmt.Printf("%s: %.2f× the plain receiver, %.2f× the no-op server; paydesk listen is %.2f× it\n", t.name, m/pl, m/n, l/m)
		}
	}
	return nil
}

// medianCPU is the median of per-round CPU times, in µs a push.
func medianCPU(rounds []time.Duration, pushes int) float64 {
	var v []float64
	for _, d := range rounds {
		v = append(v, float64(d.Microseconds())/float64(pushes))
	}
	return median(v)
}

// seconds is each of ds in seconds.
func seconds(ds []time.Duration) []float64 {
	v := make([]float64, len(ds))
	for i, d := range ds {
		v[i] = d.Seconds()
	}
	return v
}

// awaitIdle waits until t's processes stop using the CPU — paydesk
// listen on a file applies its push inbox after the answers, and the
// applier's work is part of a push's cost — and returns how long that
// took: idle is two polls 100 ms apart that add less than one clock tick
// (10 ms) of CPU. A heuristic of a measuring tool, not of a test: the
// listener has no other outside sign of its applier's progress (the file
// is locked while it runs).
func awaitIdle(ctx context.Context, t *target) time.Duration {
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last, quiet := t.cpuTime(), 0
	for quiet < 2 && time.Since(start) < 10*time.Minute {
		select {
		case <-ctx.Done():
			return time.Since(start)
		case <-tick.C:
		}
		now := t.cpuTime()
		if now-last < 10*time.Millisecond {
			quiet++
		} else {
			quiet = 0
		}
		last = now
	}
	return time.Since(start)
}

// startShop is a tiny local shop endpoint that answers every push 200
// and counts them in got.
func startShop(got *atomic.Int64) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			got.Add(1)
		}))
	}()
	return ln, nil
}

// awaitShop waits until the shop has had want pushes, so that a forwarding
// target's deliveries still under way do not take the next target's CPU,
// and returns how long that took (false when not within a minute).
func awaitShop(ctx context.Context, got *atomic.Int64, want int64) (time.Duration, bool) {
	start := time.Now()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for got.Load() < want {
		if time.Since(start) > time.Minute {
			return time.Since(start), false
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-tick.C:
		}
	}
	return time.Since(start), true
}

// send sends one round's pushes to t, split evenly between its processes
// (each signed for the address it goes to), and merges what they measured.
func (t *target) send(ctx context.Context, creds api.Credentials, first int, p comparePlan) (pushload.Result, error) {
	type part struct {
		res pushload.Result
		err error
	}
	parts := make([]part, len(t.addrs))
	var wg sync.WaitGroup
	for i, addr := range t.addrs {
		n := p.pushes / len(t.addrs)
		if i == 0 {
			n += p.pushes % len(t.addrs)
		}
		from := first + i*(p.pushes/len(t.addrs))
		if i > 0 {
			from += p.pushes % len(t.addrs)
		}
		reqs, err := pushload.Prepare(pushload.Plan{Addr: addr, Credentials: creds, Pushes: n, First: from, RandomKeys: p.randomKeys})
		if err != nil {
			return pushload.Result{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := pushload.Run(ctx, addr, reqs, max(1, p.senders/len(t.addrs)))
			parts[i] = part{res, err}
		}()
	}
	wg.Wait()
	var all []pushload.Result
	for _, pt := range parts {
		if pt.err != nil {
			return pushload.Result{}, pt.err
		}
		all = append(all, pt.res)
	}
	return pushload.Merge(all...), nil
}

// cpuTime is the CPU (user and system) t's processes have used so far.
func (t *target) cpuTime() time.Duration {
	var sum time.Duration
	for _, c := range t.cmds {
		sum += pushload.ProcCPU(c.Process.Pid)
	}
	return sum
}

// databaseSize is pg_database_size of the database url names.
func databaseSize(ctx context.Context, url string) (int64, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int64
	err = conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n)
	return n, err
}

func awaitAddress(r io.Reader) (string, error) {
	re := regexp.MustCompile(`listening on https?://(\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sent := false
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
	}()
	select {
	case a := <-found:
		return a, nil
	case <-time.After(20 * time.Second):
		return "", errors.New("no address printed within 20 s")
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type attackPlan struct {
	addr, websiteKey string
	shape            pushload.Shape
	conns            int
	duration, every  time.Duration
	tls              bool
	pid              int
}

// runAttack holds the attack for its duration while probing, then prints
// the probes answered within 2 s and, with a PID, the listener's peak RSS
// (VmHWM) and its largest RSS seen during the attack.
func runAttack(ctx context.Context, p attackPlan) error {
	secret := os.Getenv("PAYDESK_SECRET_KEY")
	if p.websiteKey == "" || secret == "" {
		return errors.New("-attack needs -website-key and $PAYDESK_SECRET_KEY (the probe signs its pushes)")
	}
	if !slices.Contains(pushload.Shapes, p.shape) {
		return fmt.Errorf("-attack %q: one of %v", p.shape, pushload.Shapes)
	}
	ctx, stop := context.WithTimeout(ctx, p.duration)
	defer stop()
	a := &pushload.Attack{Addr: p.addr, Shape: p.shape, Conns: p.conns, WebsiteKey: p.websiteKey}
	probe := &pushload.Probe{Addr: p.addr, TLS: p.tls, Every: p.every, First: int(time.Now().UnixMicro() % 1e15),
		Credentials: api.Credentials{WebsiteKey: p.websiteKey, SecretKey: secret}}
	fmt.Fprintf(os.Stderr, "pushload: %d %s connections to %s for %v, a signed probe every %v\n", p.conns, p.shape, p.addr, p.duration, p.every)
	attackDone := make(chan struct{})
	go func() { defer close(attackDone); a.Run(ctx) }()
	var peakRSS atomic.Int64
	go func() {
		if p.pid <= 0 {
			return
		}
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				peakRSS.Store(max(peakRSS.Load(), procStatus(p.pid, "VmRSS")))
			}
		}
	}()
	// The probe starts once the attack has ramped up.
	ramp := time.NewTimer(2 * time.Second)
	select {
	case <-ctx.Done():
	case <-ramp.C:
	}
	probe.Run(ctx)
	<-attackDone
	rs := probe.Results()
	ok, all := pushload.Within(rs, 2*time.Second)
	var lat []time.Duration
	errs := map[string]int{}
	for _, r := range rs {
		if r.Status == http.StatusOK {
			lat = append(lat, r.Took)
		} else if r.Err != nil {
			errs[errClass(r.Err)]++
		} else {
			errs[fmt.Sprintf("HTTP %d", r.Status)]++
		}
	}
	slices.Sort(lat)
	st := a.Stats()
	fmt.Printf("attack %s × %d: %d dials (%d failed), %d answers to it\n", p.shape, p.conns, st.Dials, st.Failed, st.Answered)
	fmt.Printf("probes answered 200 within 2 s: %d of %d (%.1f %%)", ok, all, 100*float64(ok)/float64(max(all, 1)))
	if len(lat) > 0 {
		fmt.Printf("; p50 %.0f ms, p99 %.0f ms, max %.0f ms", ms(lat[len(lat)/2]), ms(lat[min(len(lat)-1, len(lat)*99/100)]), ms(lat[len(lat)-1]))
	}
	fmt.Println()
	shown := 0
	for _, r := range rs {
		if (r.Status != http.StatusOK || r.Took > 2*time.Second) && shown < 5 {
			shown++
			fmt.Printf("  slow probe at +%.1f s: %.0f ms, HTTP %d, %v\n", r.Start.Sub(rs[0].Start).Seconds(), ms(r.Took), r.Status, r.Err)
		}
	}
	for e, n := range errs {
		fmt.Printf("  %d × %s\n", n, e)
	}
	if p.pid > 0 {
		fmt.Printf("listener RSS: peak during the attack %.0f MB, VmHWM %.0f MB\n", float64(peakRSS.Load())/1024, float64(procStatus(p.pid, "VmHWM"))/1024)
	}
	return nil
}

// errClass is an error without the parts that differ each time.
func errClass(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "Client.Timeout"), strings.Contains(s, "deadline exceeded"):
		return "timeout (10 s)"
	case strings.Contains(s, "connection reset"):
		return "connection reset"
	case strings.Contains(s, "EOF"):
		return "closed without an answer (EOF)"
	case strings.Contains(s, "refused"):
		return "connection refused"
	}
	if len(s) > 80 {
		s = s[len(s)-80:]
	}
	return s
}

// procStatus reads a kB figure of /proc/PID/status (VmRSS, VmHWM).
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int64
			_, _ = fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb
		}
	}
	return 0
}
