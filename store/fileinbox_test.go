package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store/kvlayout"
)

// openInboxFile opens a fresh cache file as paydesk listen does, with its
// push inbox, and returns it and its path.
func openInboxFile(t *testing.T, opts Options) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "paydesk.db")
	opts.PushInbox, opts.NoSync = true, true
	now := t0
	opts.Now = func() time.Time { return now }
	db, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return db, path
}

// ingestAll ingests ps (each of the indexes in twice also a second time)
// from goroutines of their own and waits until each was applied; it
// returns the outcomes by key.
func ingestAll(t *testing.T, db *DB, ps []*api.Push, twice map[int]bool) map[string][]ApplyResult {
	t.Helper()
	var (
		mu       sync.Mutex
		outcomes = map[string][]ApplyResult{}
		applied  sync.WaitGroup
		sent     sync.WaitGroup
	)
	send := func(p *api.Push, sends int) {
		defer sent.Done()
		applied.Add(1)
		ingest(t, db, p, func(r ApplyResult) {
			mu.Lock()
			outcomes[p.Key()] = append(outcomes[p.Key()], r)
			unheard := sends - len(outcomes[p.Key()])
			mu.Unlock()
			// Whoever hears of an outcome finds that push no longer
			// waiting in the inbox.
			if db.finbox != nil {
				if n := waitingCopies(db.finbox, p.Key()); n > unheard {
					t.Errorf("push %s: outcome reported while %d copies wait in the inbox, %d unheard", p.Key(), n, unheard)
				}
			}
			applied.Done()
		})
	}
	for i, p := range ps {
		sends := 1
		if twice[i] {
			sends = 2
		}
		for range sends {
			sent.Add(1)
			go send(p, sends)
		}
	}
	sent.Wait()
	applied.Wait()
	return outcomes
}

// waitingCopies counts the pushes of that key in the inbox's backlog.
func waitingCopies(ib *fileInbox, key string) int {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	n := 0
	for _, j := range ib.backlog {
		if j.pp.rec.Key == key {
			n++
		}
	}
	return n
}

// Pushes ingested into a file's inbox are each applied once, a push sent
// twice is stored once with a receipt, every caller hears its push's
// outcome, and the inbox's applied mark is the last push appended.
func TestFileInboxAppliesEachPushOnce(t *testing.T) {
	db, _ := openInboxFile(t, Options{})
	defer db.Close()
	ps := inboxPushes(700) // more than one apply transaction
	twice := map[int]bool{3: true, 350: true, 699: true}
	outcomes := ingestAll(t, db, ps, twice)
	checkOnce(t, db, ps)
	for i, p := range ps {
		got := outcomes[p.Key()]
		want := 1
		if twice[i] {
			want = 2
		}
		if len(got) != want {
			t.Fatalf("push %d: %d outcomes, want %d", i, len(got), want)
		}
		applied, dups := 0, 0
		for _, r := range got {
			if r.Duplicate {
				dups++
			} else if r.Applied && r.ID != 0 {
				applied++
			}
		}
		if applied != 1 || dups != want-1 {
			t.Errorf("push %d: outcomes %+v, want one applied and %d duplicate", i, got, want-1)
		}
	}
	mark, err := db.bk.InboxApplied()
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(len(ps) + len(twice)); mark != want {
		t.Errorf("applied mark %d, want %d (every push appended)", mark, want)
	}
	if n, err := db.InboxWaiting(context.Background()); err != nil || n != 0 {
		t.Errorf("InboxWaiting = %d, %v; want 0", n, err)
	}
}

// What the inbox file holds past the applied mark when the process dies
// is applied by the next Open — by whoever opens the file, with or without
// an inbox of its own — once: entries up to the mark are not applied
// again, the tail an append left cut short is dropped, a push whose body
// does not decode is kept in the push log as not applied, and the file is
// emptied.
func TestFileInboxReplayAtOpen(t *testing.T) {
	db, path := openInboxFile(t, Options{})
	ps := inboxPushes(40)
	ingestAll(t, db, ps[:10], nil) // applied: the mark is 10
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// The files as a kill -9 leaves them: entries 6–10 again (applied
	// before the kill, still in a file), 11–40 appended and answered but
	// not applied, one whose body is not a push, and half an append; the
	// older entries in the second file, the newer in the first.
	var b []byte
	frame := func(seq uint64, p *api.Push, body []byte) {
		if body == nil {
			var err error
			if body, err = p.Encode(); err != nil {
				t.Fatal(err)
			}
		}
		rec := PushRecord{Body: body, Method: "POST", URL: "/push", ReceivedAt: t0, Signature: SignatureValid}
		if p != nil {
			rec.Describe(p)
			rec.Hash = pushHash(p, body)
		}
		b = appendInboxFrame(b, seq, kvlayout.EncodePush(&rec))
	}
	for i := 5; i < 20; i++ {
		frame(uint64(i+1), ps[i], nil)
	}
	paths := inboxPaths(path)
	if err := os.WriteFile(paths[1], b, 0o600); err != nil {
		t.Fatal(err)
	}
	b = nil
	for i := 20; i < 40; i++ {
		frame(uint64(i+1), ps[i], nil)
	}
	frame(41, nil, []byte(`{"not":"a push"}`))
	whole := len(b)
	frame(42, ps[0], nil)
	b = b[:whole+20] // the kill cut this append short
	if err := os.WriteFile(paths[0], b, 0o600); err != nil {
		t.Fatal(err)
	}

	var logged []string
	reopen := func() *DB {
		t.Helper()
		db, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 },
			Logf: func(f string, a ...any) { logged = append(logged, f) }})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db = reopen()
	checkPushLog(t, db, ps, 1)
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.Size() != 0 {
			t.Errorf("inbox file after the replay: %v, %v; want empty", st, err)
		}
	}
	if !strings.Contains(strings.Join(logged, "\n"), "cut short") {
		t.Errorf("the dropped tail was not reported: %q", logged)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// A second open finds nothing to do.
	db = reopen()
	defer db.Close()
	checkPushLog(t, db, ps, 1)
}

// checkPushLog checks that each push of ps is in the push log once and
// that the log holds notApplied more records, each not applied.
func checkPushLog(t *testing.T, db *DB, ps []*api.Push, notApplied int) {
	t.Helper()
	log, err := db.Pushes(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	refused := 0
	for _, r := range log {
		if r.Key == "" || strings.HasPrefix(r.Ignored, "not applied") {
			refused++
			continue
		}
		seen[r.Key]++
	}
	for i, p := range ps {
		if seen[p.Key()] != 1 {
			t.Errorf("push %d is in the push log %d times, want once", i, seen[p.Key()])
		}
	}
	if refused != notApplied {
		t.Errorf("%d records not applied, want %d", refused, notApplied)
	}
	// An entry applied again would be a repeat of its push (a receipt).
	rc, err := db.PushReceiptsOf(t.Context(), log)
	if err != nil {
		t.Fatal(err)
	}
	for id, r := range rc {
		if r.Count != 1 {
			t.Errorf("push %d has %d receipts, want 1: an entry was applied twice", id, r.Count)
		}
	}
}

// An inbox file that fails to close is reported by Close, which still
// closes the rest of the DB: its group commit and the cache file, which
// another Open then takes.
func TestFileInboxCloseFailureClosesTheRest(t *testing.T) {
	db, path := openInboxFile(t, Options{})
	ingestAll(t, db, inboxPushes(5), nil)
	if err := db.finbox.seg[0].f.Close(); err != nil { // its Close in Close now fails
		t.Fatal(err)
	}
	err := db.Close()
	if err == nil || !strings.Contains(err.Error(), "push inbox") {
		t.Fatalf("Close = %v, want the inbox file's failure", err)
	}
	db.batch.queue.mu.RLock()
	closed := db.batch.queue.closed
	db.batch.queue.mu.RUnlock()
	if !closed {
		t.Error("the group commit is still open after Close")
	}
	again, err := Open(path, Options{NoSync: true, LockTimeout: time.Second})
	if err != nil {
		t.Fatalf("open after Close: %v", err)
	}
	checkOnce(t, again, inboxPushes(5))
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}

// Close appends what is queued and applies the backlog: every push
// answered before Close returned is in the file without a replay.
func TestFileInboxCloseAppliesBacklog(t *testing.T) {
	db, path := openInboxFile(t, Options{})
	// A write transaction held open keeps the applier from applying:
	// the pushes are answered (appended) and wait.
	held, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = db.repo.Update(context.Background(), func(RepoTx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	ps := inboxPushes(2*fileApplyBatch + 100) // more than the applier takes at once
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ingest(t, db, p, nil)
		}()
	}
	wg.Wait()
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(inboxPaths(path)[0]); err != nil {
		t.Fatal(err)
	} else if st.Size() == 0 {
		t.Fatal("the inbox file is empty: the test did not go through it")
	}
	mark := appliedMark(t, path)
	if mark != uint64(len(ps)) {
		t.Errorf("applied mark after Close %d, want %d: Close left pushes unapplied", mark, len(ps))
	}
}

// appliedMark reads the inbox's applied mark of the closed file at path
// without replaying the inbox.
func appliedMark(t *testing.T, path string) uint64 {
	t.Helper()
	// Open replays, and would apply what Close left: hide the inbox.
	for _, p := range inboxPaths(path) {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(p, raw, 0o600)
	}
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mark, err := db.bk.InboxApplied()
	if err != nil {
		t.Fatal(err)
	}
	return mark
}

// The inbox is two files appended to in turn: past its segment size the
// writer empties the other file and goes on there, so the inbox's disk is
// bounded; the pushes number on across the turns, and a kill after them
// loses nothing and applies nothing twice.
func TestFileInboxTakesTurnsInTwoFiles(t *testing.T) {
	db, path := openInboxFile(t, Options{})
	db.finbox.segmentAt, db.finbox.backlogMax = 8<<10, 8<<10 // a few pushes each
	ps := inboxPushes(200)
	for i := 0; i < len(ps); i += 10 {
		ingestAll(t, db, ps[i:i+10], nil)
	}
	var raws [2][]byte
	var seqs []uint64
	for i, p := range inboxPaths(path) {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) > 8<<10+20<<10 { // the segment size and a batch past it
			t.Errorf("inbox file %d of %d bytes, the segment size is 8 KiB: never emptied", i, len(raw))
		}
		frames, good := scanInbox(raw)
		if good != len(raw) {
			t.Errorf("inbox file %d: %d of %d bytes read", i, good, len(raw))
		}
		for _, f := range frames {
			seqs = append(seqs, f.seq)
		}
		raws[i] = raw
	}
	slices.Sort(seqs)
	if len(seqs) == 0 || len(seqs) == len(ps) || seqs[len(seqs)-1] != uint64(len(ps)) {
		t.Fatalf("inbox files hold pushes %v; want the newest up to %d, not all of them", seqs, len(ps))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// As after a kill: the files still hold applied entries.
	for i, p := range inboxPaths(path) {
		if err := os.WriteFile(p, raws[i], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(path, Options{NoSync: true, PushInbox: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkOnce(t, db, ps)
	checkPushLog(t, db, ps, 0)
}

// A damaged cache file takes no pushes into its inbox either: the sender
// is told it was not stored.
func TestFileInboxRefusesOnDamage(t *testing.T) {
	db, _ := openInboxFile(t, Options{})
	defer db.Close()
	db.finbox.fail(ErrDamaged)
	p := inboxPushes(1)[0]
	body, _ := p.Encode()
	_, err := db.IngestPush(context.Background(), PushRecord{Body: body}, p, nil)
	if err == nil {
		t.Fatal("IngestPush into a failed inbox answered stored")
	}
}

func TestScanInbox(t *testing.T) {
	frame := func(b []byte, seq uint64, payload string) []byte {
		return appendInboxFrame(b, seq, []byte(payload))
	}
	two := frame(frame(nil, 1, "one"), 2, "two")
	flip := func(b []byte, i int) []byte {
		c := bytes.Clone(b)
		c[i] ^= 1
		return c
	}
	for _, tc := range []struct {
		name string
		b    []byte
		seqs []uint64
		good int
	}{
		{"empty", nil, nil, 0},
		{"two frames", two, []uint64{1, 2}, len(two)},
		{"a head cut short", two[:len(two)-len("two")-3], []uint64{1}, inboxFrameHead + 3},
		{"a payload cut short", two[:len(two)-1], []uint64{1}, inboxFrameHead + 3},
		{"a flipped payload bit", flip(two, len(two)-1), []uint64{1}, inboxFrameHead + 3},
		{"a flipped sequence bit", flip(two, inboxFrameHead+3+8), []uint64{1}, inboxFrameHead + 3},
		{"zeros after the frames", append(bytes.Clone(two), make([]byte, 64)...), []uint64{1, 2}, len(two)},
		{"a sequence number that does not rise", frame(bytes.Clone(two), 2, "again"), []uint64{1, 2}, len(two)},
		{"a frame after a torn one", frame(append(bytes.Clone(two[:len(two)-1]), 0), 3, "three"), []uint64{1}, inboxFrameHead + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames, good := scanInbox(tc.b)
			var seqs []uint64
			for _, f := range frames {
				seqs = append(seqs, f.seq)
			}
			if !slices.Equal(seqs, tc.seqs) || good != tc.good {
				t.Errorf("scanInbox = %v, %d; want %v, %d", seqs, good, tc.seqs, tc.good)
			}
		})
	}
}

// FuzzScanInbox: whatever a file holds (a disk's garbage, a foreign
// file), reading it back neither panics nor reads past what it checked,
// and what it accepts encodes back to the bytes it read.
func FuzzScanInbox(f *testing.F) {
	f.Add(appendInboxFrame(appendInboxFrame(nil, 1, []byte("one")), 2, []byte("two")))
	f.Add([]byte{})
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, b []byte) {
		frames, good := scanInbox(b)
		if good < 0 || good > len(b) {
			t.Fatalf("good %d of %d bytes", good, len(b))
		}
		var again []byte
		for _, fr := range frames {
			again = appendInboxFrame(again, fr.seq, fr.payload)
		}
		if !bytes.Equal(again, b[:good]) {
			t.Fatalf("frames re-encode to %x, read from %x", again, b[:good])
		}
	})
}

// When the store fails to take the pushes (a full disk, say) the applier
// waits and tries again: the pushes appended wait in the inbox, new ones
// are refused meanwhile (the gateway sends them again), and once the
// store takes them each is applied once and reported once — none is
// taken for one the rules refused and kept as not applied.
func TestFileInboxWaitsOutAStoreFailure(t *testing.T) {
	db, _ := openInboxFile(t, Options{})
	defer db.Close()
	ib := db.finbox
	var (
		mu        sync.Mutex
		failsLeft = 2 // the store fails the next two transactions
	)
	real := ib.applyTx
	gate := make(chan struct{}) // closed once the first pushes are appended
	ib.applyTx = func(fn func(RepoTx) (uint64, error)) error {
		<-gate
		mu.Lock()
		fail := failsLeft > 0
		failsLeft--
		mu.Unlock()
		if fail {
			return errors.New("write: no space left on device")
		}
		return real(fn)
	}
	paused, resume := make(chan int), make(chan bool)
	ib.pause = func(attempt int, stop <-chan struct{}) bool {
		paused <- attempt
		return <-resume
	}
	ps := inboxPushes(6)
	reports := make(chan ApplyResult, len(ps))
	onApplied := func(r ApplyResult) { reports <- r }
	for _, p := range ps[:5] {
		ingest(t, db, p, onApplied) // answered: appended
	}
	close(gate)
	for attempt := range 2 {
		select {
		case a := <-paused:
			if a != attempt {
				t.Fatalf("pause at attempt %d, want %d", a, attempt)
			}
		case r := <-reports:
			t.Fatalf("a push reported (%+v) while the store failed", r)
		}
		if attempt == 0 {
			body, _ := ps[5].Encode()
			if _, err := db.IngestPush(context.Background(), PushRecord{Body: body}, ps[5], nil); err == nil || !strings.Contains(err.Error(), "no space left") {
				t.Fatalf("IngestPush while the store fails = %v, want the store's failure", err)
			}
		}
		resume <- true
	}
	for i := range ps {
		if i == 5 { // the first five applied: the inbox takes pushes again
			ingest(t, db, ps[5], onApplied)
		}
		if r := <-reports; !r.Applied || r.ID == 0 {
			t.Errorf("reported %+v, want applied", r)
		}
	}
	checkOnce(t, db, ps)
	checkPushLog(t, db, ps, 0)
}
