package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"paydesk/api"
	"paydesk/internal/pgtest"
	"paydesk/internal/private"
	"paydesk/store/kvlayout"
)

func TestOpenCreatesPrivateFile(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "a", "b", "paydesk.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Dir(path))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", di.Mode().Perm())
	}
}

func TestOpenHeldFileFailsFast(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "paydesk.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The second Open gives up after its LockTimeout instead of waiting
	// for the other process; the deadline only ends a stuck test.
	opened := make(chan error, 1)
	go func() {
		_, err := Open(path, Options{NoSync: true, LockTimeout: 50 * time.Millisecond})
		opened <- err
	}()
	select {
	case err = <-opened:
	case <-time.After(time.Minute):
		t.Fatal("the second Open waits for the file's holder")
	}
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second Open: %v; want ErrLocked naming %s", err, path)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "paydesk.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, SchemaVersion+1)
		return tx.Bucket(bMeta).Put(kSchema, v)
	})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{NoSync: true}); !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a newer file: %v", err)
	}
}

// TestReopenTurnsInFlightIntoUnknown: an operation journaled but never
// answered by a process that ended is "outcome unknown" on the next open,
// and its reservation says so.
func TestReopenTurnsInFlightIntoUnknown(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "paydesk.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s := newScenario(t, db, &gw{clock: t0}, "ORDER-R")
	s.reserve(articles(), true)
	id := s.begin(api.CancelReservation{Currency: "EUR", Invoice: s.inv, ReservationNumber: s.resNum})
	db.Close()

	db, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	op, err := db.Op(t.Context(), id)
	if err != nil || op.State != OpOutcomeUnknown {
		t.Fatalf("op after reopen: %+v, %v", op, err)
	}
	r, err := db.Reservation(t.Context(), s.resNum)
	if err != nil || !r.OutcomeUnknown {
		t.Fatalf("reservation not marked: %+v, %v", r, err)
	}
	if n, _ := db.Counts(t.Context()); n.OutcomeUnknown != 1 || n.Reservations != 1 || n.Pushes != 1 {
		t.Errorf("counts %+v", n)
	}
	// The cancel push arrives: it settles the operation (no key was known,
	// so it matches by action and invoice) and the mark goes.
	s.db = db
	p := dataPush(s.g.key(), s.inv, api.ActionCancelReservation, s.g.status(api.StatusSuccess, api.SubCodeProcessed))
	res := push(t, db, p)
	if len(res.Settled) != 1 || res.Settled[0] != id {
		t.Fatalf("push settled %v, want [%d]", res.Settled, id)
	}
	op, _ = db.Op(t.Context(), id)
	r, _ = db.Reservation(t.Context(), s.resNum)
	if op.State != OpSettled || op.ResultKey != p.Key() || r.OutcomeUnknown || r.State() != StateCancelled {
		t.Errorf("after the push: op %s %s, reservation unknown=%v state %s", op.State, op.ResultKey, r.OutcomeUnknown, r.State())
	}
	if err := db.ResolveOp(t.Context(), id, "late"); err == nil {
		t.Error("resolving a settled operation was accepted")
	}
}

// TestOutcomeUnknownCaptureSettledByPush: the capture's answer never came;
// the push books the capture with the lines the operation sent.
func TestOutcomeUnknownCaptureSettledByPush(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	s := newScenario(t, db, g, "ORDER-U")
	s.reserve(articles(), true)
	id := s.begin(api.Capture{Currency: "EUR", Invoice: s.inv, ReservationNumber: s.resNum, Amount: dec("39.98"),
		Lines: []api.CaptureLine{{ArticleNumber: "A", Quantity: 2}}})
	if err := db.MarkOutcomeUnknown(t.Context(), id, "connection reset"); err != nil {
		t.Fatal(err)
	}
	if r := s.reservation(); !r.OutcomeUnknown {
		t.Fatal("reservation not marked outcome unknown")
	}
	k := g.key()
	res := push(t, db, txPush(k, s.inv, api.ServiceDeferred, api.TypeDeferredPay, dec("39.98"), g.status(190, "S001"), nil,
		api.ResponseParameter{Name: api.PInvoiceNumber, Value: "INV-9"}))
	if len(res.Settled) != 1 {
		t.Fatalf("settled %v", res.Settled)
	}
	r := s.reservation()
	if r.OutcomeUnknown || r.State() != StatePartlyCaptured || r.Lines[0].Captured != 2 {
		t.Errorf("reservation after push: unknown=%v state=%s line A %+v", r.OutcomeUnknown, r.State(), r.Lines[0])
	}
	ops, err := db.Ops(t.Context(), OpOutcomeUnknown)
	if err != nil || len(ops) != 0 {
		t.Errorf("still unknown: %d, %v", len(ops), err)
	}
}

func TestSubscribeCoalescesWhenSlow(t *testing.T) {
	db := openTest(t)
	ch, cancel := db.Subscribe()
	defer cancel()
	for i := 0; i < subscriberBuffer+10; i++ {
		if _, err := db.AppendAudit(t.Context(), AuditEntry{Operator: "t", Action: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	n, overflow := 0, false
	for len(ch) > 0 {
		c := <-ch
		n++
		overflow = overflow || c.Overflow
	}
	if n != subscriberBuffer || overflow {
		t.Fatalf("buffered %d (overflow %v), want %d", n, overflow, subscriberBuffer)
	}
	if _, err := db.AppendAudit(t.Context(), AuditEntry{Action: "y"}); err != nil {
		t.Fatal(err)
	}
	if c := <-ch; !c.Overflow || !c.Audit {
		t.Errorf("after drops: %+v, want Overflow", c)
	}
	entries, err := db.Audit(t.Context(), 3)
	if err != nil || len(entries) != 3 || entries[0].Action != "y" {
		t.Errorf("audit newest first: %+v %v", entries, err)
	}
}

func TestBoundedLogs(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := Open(path, Options{NoSync: true, MaxRejected: 5, MaxExchanges: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < 12; i++ {
		if _, err := db.RecordRejectedPush(t.Context(), PushRecord{Reason: "r" + itoa(i), RemoteAddr: "192.0.2." + itoa(i) + ":4000"}); err != nil {
			t.Fatal(err)
		}
		body := `{"Currency":"EUR","Services":{"ServiceList":[{"Name":"voucherb","Action":"Pay","Parameters":[{"Name":"VoucherBPIN","Value":"1234"}]}]}}`
		if _, err := db.AppendExchange(t.Context(), Exchange{Action: "Pay", RequestBody: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	rej, _ := db.RejectedPushes(t.Context(), 0)
	// The first five sources keep their entries; the seven after them,
	// arriving while the log is full, are counted under "other sources".
	if len(rej) != 6 || rej[0].RemoteAddr != OtherSources || rej[0].Count != 7 || rej[0].Reason != "r11" || rej[1].Reason != "r4" || rej[5].Reason != "r0" {
		t.Errorf("rejected log kept %d, newest %q %q ×%d", len(rej), rej[0].RemoteAddr, rej[0].Reason, rej[0].Count)
	}
	xs, _ := db.Exchanges(t.Context(), 0)
	if len(xs) != 3 || strings.Contains(string(xs[0].RequestBody), "1234") {
		t.Errorf("gateway log kept %d; body %s", len(xs), xs[0].RequestBody)
	}
	if n, _ := db.Counts(t.Context()); n.Rejected != 12 {
		t.Errorf("rejected counter %d, want 12", n.Rejected)
	}
}

// TestCountsMatchRecords sends concurrent pushes (new reservations and
// transactions, repeats) and rejected pushes through group commit and checks
// that the counts kept in meta equal the records stored.
func TestCountsMatchRecords(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	var pushes []*api.Push
	for i := range 40 {
		pushes = append(pushes, dataPush(g.key(), fmt.Sprintf("INV-%d", i), api.ActionReserve, g.status(api.StatusSuccess, "")))
		pushes = append(pushes, txPush(g.key(), fmt.Sprintf("GC-%d", i), "customgiftcard", api.TypeGiftCardPay, dec("10.00"), g.status(api.StatusSuccess, ""), nil))
	}
	pushes = append(pushes, pushes[:20]...) // repeats: stored once
	var wg sync.WaitGroup
	for _, p := range pushes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			push(t, db, p)
		}()
	}
	for i := range 7 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.RecordRejectedPush(context.Background(), PushRecord{Reason: fmt.Sprint("bad ", i)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n, err := db.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	txs, err := db.Transactions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.Pushes(t.Context(), 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	rejected, err := db.RejectedPushes(t.Context(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := db.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n.Reservations != len(sums) || len(sums) != 40 || n.Transactions != len(txs) || len(txs) != 40 || n.Pushes != uint64(len(stored)) || len(stored) != 80 ||
		n.Rejected != uint64(len(rejected)) || len(rejected) != 7 {
		t.Fatalf("counts %+v; stored %d transactions, %d pushes, %d rejected", n, len(txs), len(stored), len(rejected))
	}
}

// TestPushIndexOfOlderCaches: caches written before the per-key push index
// moved beside the transaction records keep its entries in bPushKey; a push
// indexed there is still found as a duplicate and listed for its key.
func TestPushIndexOfOlderCaches(t *testing.T) {
	db := openTest(t)
	if db.rel != nil {
		// The native engine's push identity is paydesk_pushes' (key, hash)
		// (TestRelationalPushIdentity); an older cache's index is a bucket
		// layout, and a database's buckets are converted, not read.
		t.Skip("a bucket layout: the native engine has no buckets")
	}
	g := &gw{clock: t0}
	p := txPush(g.key(), "GC-1", "customgiftcard", api.TypeGiftCardPay, dec("10.00"), g.status(api.StatusSuccess, ""), nil)
	first := push(t, db, p)
	if err := db.bk.Engine().Update(func(tx Tx) error { return moveToVersion1Index(tx, p.Key(), first.ID) }); err != nil {
		t.Fatal(err)
	}
	if again := push(t, db, p); !again.Duplicate || again.ID != first.ID {
		t.Fatalf("the same push again: %+v, want a duplicate of push %d", again, first.ID)
	}
	pushes, err := db.PushesFor(t.Context(), p.Key())
	if err != nil {
		t.Fatal(err)
	}
	if len(pushes) != 1 || pushes[0].ID != first.ID {
		t.Fatalf("PushesFor = %d pushes, want push %d once", len(pushes), first.ID)
	}
	txs, err := db.Transactions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(txs) != 1 || txs[0].Key != p.Key() {
		t.Fatalf("Transactions = %d, want the one transaction and no index entries", len(txs))
	}
}

// TestOpenMigratesVersion1: a version 1 file (push index in pushkey) opens
// as version 2 and its pushes are still found by key.
func TestOpenMigratesVersion1(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "paydesk.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	g := &gw{clock: t0}
	p := txPush(g.key(), "GC-1", "customgiftcard", api.TypeGiftCardPay, dec("10.00"), g.status(api.StatusSuccess, ""), nil)
	first := push(t, db, p)
	// Make it a version 1 file: the index entry in pushkey, schema 1.
	err = db.bk.Engine().Update(func(tx Tx) error {
		if err := moveToVersion1Index(tx, p.Key(), first.ID); err != nil {
			return err
		}
		return tx.Bucket(bMeta).Put(kSchema, u64(1))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v uint64
	if err := db.bk.Engine().View(func(tx Tx) error { v = kvlayout.Be64(tx.Bucket(bMeta).Get(kSchema)); return nil }); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion {
		t.Fatalf("schema %d after open, want %d", v, SchemaVersion)
	}
	if again := push(t, db, p); !again.Duplicate || again.ID != first.ID {
		t.Fatalf("the same push after the migration: %+v, want a duplicate of push %d", again, first.ID)
	}
}

// moveToVersion1Index moves the index entry of push id under key where a
// version 1 cache keeps it: from beside the transaction records to pushkey.
func moveToVersion1Index(tx Tx, key string, id uint64) error {
	k := append(pairKey(key, ""), u64(id)...)
	v := tx.Bucket(bTransaction).Get(k)
	if v == nil {
		return errors.New("no index entry beside the transaction")
	}
	if err := tx.Bucket(bPushKey).Put(k, append([]byte(nil), v...)); err != nil {
		return err
	}
	return tx.Bucket(bTransaction).Delete(k)
}

// TestCacheReadableByOthers (F9): a cache others may read is refused with
// the chmod to run.
func TestCacheReadableByOthers(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "cache.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{NoSync: true})
	if !errors.Is(err, private.ErrTooOpen) || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Fatalf("Open of a 0644 cache = %v", err)
	}
}

// TestOpenDamagedCache: Open hands on the bucket engine's verdict on a
// damaged file (store/kv's damage tests try the damage itself): an error
// that is ErrDamaged and says in one line what to do, and the empty file
// left as it was.
func TestOpenDamagedCache(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "cache.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, Options{NoSync: true})
	if !errors.Is(err, ErrDamaged) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "mv "+path) {
		t.Fatalf("Open of an empty file = %v, want ErrDamaged in one line that says what to do", err)
	}
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Errorf("the empty file was initialised (%d bytes)", fi.Size())
	}
}
