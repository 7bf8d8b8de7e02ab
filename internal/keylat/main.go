package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"paydesk/internal/pushload"
	"paydesk/store"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

const width, height = 120, 36

func main() {
	db := flag.String("db", "", "the cache the consoles open: a file made by store/storetest/gen, or a postgres:// URL of a database it filled")
	rounds := flag.Int("rounds", 5, "rounds: each types the word and takes it back, one key at a time, in every target")
	word := flag.String("word", "müller", "the filter typed")
	each := flag.Bool("each", false, "also print every key's time, per target")
	wait := flag.Duration("wait", 5*time.Second, "after the first frames, before typing: the console warms the lists' search blocks in the background meanwhile")
	overSSH := flag.Bool("ssh", false, "also each binary's console over SSH: paydesk serve --ssh on loopback, the OpenSSH client (ssh -tt) in the pty")
	flag.Parse()
	if *db == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: keylat -db FILE|URL [-rounds N] BINARY...")
		os.Exit(2)
	}
	if err := run(*db, *word, *rounds, *each, *wait, *overSSH, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "keylat:", err)
		os.Exit(1)
	}
}

func run(db, word string, rounds int, each bool, wait time.Duration, overSSH bool, bins []string) error {
	home, err := os.MkdirTemp("", "keylat")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	env := func(dir string) []string {
		return append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_RUNTIME_DIR="+dir, "HOME="+dir, "TERM=xterm-256color")
	}

	floor, err := start("floor (cat)", []string{"cat"}, env(home))
	if err != nil {
		return err
	}
	defer floor.stop()
	targets := []*target{floor}
	for i, bin := range bins {
		// A home each, and a copy of the cache each when there are several:
		// a cache has one owner (a second console would run through the
		// first), and so has the embedded sandbox's state.
		dir := fmt.Sprintf("%s/%d", home, i)
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		own, err := cacheFor(db, dir, len(bins))
		if err != nil {
			return err
		}
		// The same console over SSH: paydesk serve on a copy of its own,
		// made before the local console opens (and writes) the cache.
		var srv *sshServer
		if overSSH {
			sdir := fmt.Sprintf("%s/%d-ssh", home, i)
			if err := os.Mkdir(sdir, 0o700); err != nil {
				return err
			}
			if srv, err = startSSH(bin, sdir, db, env(sdir)); err != nil {
				return fmt.Errorf("%s serve --ssh: %w", bin, err)
			}
			defer srv.stop()
		}
		t, err := start(bin, []string{bin, "--db", own}, env(dir))
		if err != nil {
			return err
		}
		defer t.stop()
		if err := openFilter(t); err != nil {
			return err
		}
		targets = append(targets, t)
		if !overSSH {
			continue
		}
		argv, err := srv.argv()
		if err != nil {
			return err
		}
		// The OpenSSH client in the pty.
		st, err := start(bin+" over ssh", argv, env(home))
		if err != nil {
			return err
		}
		defer st.stop()
		if err := openFilter(st); err != nil {
			return err
		}
		targets = append(targets, st)
	}
	time.Sleep(wait) // not a synchronisation: the operator's pause before typing
	keys := []rune(word)
	for r := 0; r < rounds; r++ {
		// The order turns each round: on a shared database a console
		// leaves work to the server after its word (the whole counts of
		// its filters), which the target after it would otherwise always
		// type into (on a million rows its keys came 7–8 ms later).
		for i := range targets {
			t := targets[(i+r)%len(targets)]
			typed := ""
			for _, k := range keys {
				typed += string(k)
				if err := t.key(string(k), typed); err != nil {
					return err
				}
			}
			for len(typed) > 0 {
				_, size := utf8.DecodeLastRuneInString(typed)
				typed = typed[:len(typed)-size]
				if err := t.key("\x7f", typed); err != nil {
					return err
				}
			}
		}
	}
	fmt.Printf("%d keys per target (%d rounds of %q typed and taken back), screen %dx%d\n", 2*len(keys)*rounds, rounds, word, width, height)
	fmt.Printf("%-32s %8s %8s %8s %8s %8s\n", "target", "median", "p90", "p99", "max", "beyond")
	base := median(floor.lat)
	for _, t := range targets {
		m := median(t.lat)
		beyond := "-"
		if t != floor {
			beyond = ms(m - base)
		}
		fmt.Printf("%-32s %8s %8s %8s %8s %8s\n", t.name, ms(m), ms(pct(t.lat, 0.9)), ms(pct(t.lat, 0.99)), ms(slices.Max(t.lat)), beyond)
	}
	if each {
		for _, t := range targets {
			fmt.Printf("%s:", t.name)
			for i, d := range t.lat {
				if i%(2*len(keys)) == 0 {
					fmt.Print("\n ")
				}
				fmt.Printf(" %s", ms(d))
			}
			fmt.Println()
		}
	}
	return nil
}

// cacheFor is the cache a target's console opens: a file of its own when
// several binaries share the run (a file has one owner: a second console
// would run through the first, and so would the embedded sandbox's state),
// the same file when one does. A team's database (a postgres:// URL) is
// opened by every console as it is: several processes share one by design.
func cacheFor(db, dir string, bins int) (string, error) {
	if store.IsPostgresURL(db) || bins == 1 {
		return db, nil
	}
	own := dir + "/cache.db"
	if err := pushload.CopyFile(db, own); err != nil {
		return "", err
	}
	return own, nil
}

// openFilter waits for t's first frame (a reservation row), then opens
// the reservations tab and its filter.
func openFilter(t *target) error {
	if _, err := t.waitFor(func(s string) bool { return rowRE.MatchString(s) }, time.Minute); err != nil {
		return fmt.Errorf("%s: first frame: %w", t.name, err)
	}
	for _, k := range []string{"1", "/"} {
		if err := t.press(k); err != nil {
			return err
		}
	}
	if _, err := t.waitFor(func(s string) bool { return strings.Contains(line(s, 1), "/ ▏") }, time.Minute); err != nil {
		return fmt.Errorf("%s: the filter did not open: %w", t.name, err)
	}
	return nil
}

// rowRE is a generated reservation number: the list has drawn rows.
var rowRE = regexp.MustCompile(`R10[0-9]{7}`)

// pendingRE is the list's info line while its rows or count are on their way.
var pendingRE = regexp.MustCompile(`… [0-9…]`)

type target struct {
	name string
	cmd  *exec.Cmd
	ptmx *os.File
	lat  []time.Duration

	mu      sync.Mutex
	term    *vt.Emulator
	changed chan struct{} // a token after every write into term
	last    time.Time     // when the last output was written into term
	done    chan struct{}
}

func start(name string, argv []string, env []string) (*target, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: height, Cols: width})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t := &target{name: name, cmd: cmd, ptmx: ptmx, term: vt.NewEmulator(width, height),
		changed: make(chan struct{}, 1), done: make(chan struct{})}
	go t.read()
	// The terminal answers the program's queries (colours, cursor) on its
	// input, as a real one does.
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := t.term.Read(buf)
			if n > 0 {
				_, _ = ptmx.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return t, nil
}

// read copies the program's output into the emulator, noting when.
func (t *target) read() {
	defer close(t.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := t.ptmx.Read(buf)
		if n > 0 {
			now := time.Now()
			t.mu.Lock()
			_, _ = t.term.Write(buf[:n])
			t.last = now
			t.mu.Unlock()
			select {
			case t.changed <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

func (t *target) press(k string) error {
	_, err := io.WriteString(t.ptmx, k)
	return err
}

// key types k and waits until the screen shows typed: for the floor, the
// echoed text; for a console, its filter line with typed and the rows for
// it (no "…" before the count).
func (t *target) key(k, typed string) error {
	var done func(string) bool
	if t.cmd.Args[0] == "cat" {
		done = func(s string) bool { return strings.TrimRight(line(s, 0), " ") == typed }
	} else {
		done = func(s string) bool {
			l := line(s, 1)
			return strings.Contains(l, "/ "+typed+"▏") && !pendingRE.MatchString(l)
		}
	}
	sent := time.Now()
	if err := t.press(k); err != nil {
		return err
	}
	at, err := t.waitFor(done, time.Minute)
	if err != nil {
		return fmt.Errorf("%s: key %q: %w", t.name, k, err)
	}
	t.lat = append(t.lat, at.Sub(sent))
	return nil
}

// waitFor waits until the screen satisfies ok and returns when the output
// that made it so arrived.
func (t *target) waitFor(ok func(screen string) bool, limit time.Duration) (time.Time, error) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		t.mu.Lock()
		screen, at := t.term.String(), t.last
		t.mu.Unlock()
		if ok(screen) {
			return at, nil
		}
		select {
		case <-t.changed:
		case <-t.done:
			return time.Time{}, fmt.Errorf("the program ended; screen:\n%s", t.screen())
		case <-deadline.C:
			return time.Time{}, fmt.Errorf("not on screen after %s; screen:\n%s", limit, screen)
		}
	}
}

func (t *target) stop() {
	_ = t.cmd.Process.Kill()
	_ = t.cmd.Wait()
	_ = t.ptmx.Close()
}

func line(screen string, i int) string {
	lines := strings.Split(screen, "\n")
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

func median(d []time.Duration) time.Duration { return pct(d, 0.5) }

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func (t *target) screen() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.term.String()
}
