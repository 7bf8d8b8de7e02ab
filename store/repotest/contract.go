package repotest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store/domain"
)

// Run holds the engine that open makes (an empty store each call) to what
// the contract (store/domain/repo.go) promises: absent is nil, puts are
// read back as given, lookups follow the records, lists come in the order
// named, logs assign rising IDs, the audit log chains, a failed update
// changes nothing.
func Run(t *testing.T, open func(t *testing.T) domain.Repo) {
	cases := []struct {
		name string
		run  func(t *testing.T, r domain.Repo)
	}{
		{"absent is nil, not an error", repoAbsent},
		{"reservations and their lookups", repoReservations},
		{"deleting a reservation keeps lookups another took over", repoDeleteReservation},
		{"transactions, invoice lookup and refund links", repoTransactions},
		{"orphan data requests", repoOrphans},
		{"pushes and their duplicate check", repoPushes},
		{"the rejected log", repoRejected},
		{"the gateway log is trimmed", repoExchanges},
		{"the journal and its open operations", repoOps},
		{"the audit log is chained and keyed", repoAudit},
		{"orders and conflicts", repoOrders},
		{"batches and items", repoBatches},
		{"counters add up, also down", repoTally},
		{"a failed update changes nothing", repoRollback},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Each case has a store of its own: on PostgreSQL they wait
			// on the server side by side.
			t.Parallel()
			tc.run(t, open(t))
		})
	}
}

// t0 is the time the records are made at.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func update(t *testing.T, r domain.Repo, fn func(tx domain.RepoTx) error) {
	t.Helper()
	if err := r.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func view(t *testing.T, r domain.Repo, fn func(tx domain.RepoTx) error) {
	t.Helper()
	if err := r.View(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// testSealer keys an entry as the store's keyring does (KeyID and MAC
// set) with a plain hash, and keeps what it returned: the engine must
// store exactly that.
type testSealer struct{ sealed [][]byte }

func (s *testSealer) SealEntry(e domain.AuditEntry) (domain.AuditEntry, []byte, error) {
	e.MAC, e.KeyID = "", "test"
	body, err := json.Marshal(e)
	if err != nil {
		return e, nil, err
	}
	h := sha256.Sum256(body)
	e.MAC = hex.EncodeToString(h[:])
	v, err := json.Marshal(e)
	s.sealed = append(s.sealed, v)
	return e, v, err
}

func repoAbsent(t *testing.T, r domain.Repo) {
	view(t, r, func(tx domain.RepoTx) error {
		checks := []struct {
			what string
			got  func() (bool, error)
		}{
			{"Reservation", func() (bool, error) { v, err := tx.Reservation("nope"); return v == nil, err }},
			{"ReservationLedger", func() (bool, error) { v, err := tx.ReservationLedger("nope"); return v == nil, err }},
			{"ReservationKeyByNumber", func() (bool, error) { v, err := tx.ReservationKeyByNumber("nope"); return v == "", err }},
			{"ReservationKeysByInvoice", func() (bool, error) { v, err := tx.ReservationKeysByInvoice("nope"); return len(v) == 0, err }},
			{"OwnerOf", func() (bool, error) { v, err := tx.OwnerOf("nope"); return v == "", err }},
			{"Transaction", func() (bool, error) { v, err := tx.Transaction("nope"); return v == nil, err }},
			{"TransactionKeysByInvoice", func() (bool, error) { v, err := tx.TransactionKeysByInvoice("nope"); return len(v) == 0, err }},
			{"RefundKeys", func() (bool, error) { v, err := tx.RefundKeys("nope"); return len(v) == 0, err }},
			{"TransactionGroup", func() (bool, error) { v, err := tx.TransactionGroup("nope"); return len(v) == 0, err }},
			{"Orphan", func() (bool, error) { v, err := tx.Orphan("nope"); return v == nil, err }},
			{"PushDuplicate", func() (bool, error) { v, err := tx.PushDuplicate("nope", [32]byte{1}); return v == 0, err }},
			{"Push", func() (bool, error) { v, err := tx.Push(7); return v == nil, err }},
			{"PushIDsOf", func() (bool, error) { v, err := tx.PushIDsOf("nope"); return len(v) == 0, err }},
			{"Rejected", func() (bool, error) { v, err := tx.Rejected(7); return v == nil, err }},
			{"OldestRejected", func() (bool, error) { v, err := tx.OldestRejected(); return v == nil, err }},
			{"RejectedGroupEntry", func() (bool, error) { v, err := tx.RejectedGroupEntry("s", "c"); return v == 0, err }},
			{"Op", func() (bool, error) { v, err := tx.Op(7); return v == nil, err }},
			{"OpenOps", func() (bool, error) { v, err := tx.OpenOps(); return len(v) == 0, err }},
			{"AuditEntry", func() (bool, error) { v, err := tx.AuditEntry(7); return v == nil, err }},
			{"LastAudit", func() (bool, error) { v, err := tx.LastAudit(); return v == nil, err }},
			{"Order", func() (bool, error) { v, err := tx.Order("nope"); return v == nil, err }},
			{"Batch", func() (bool, error) { v, err := tx.Batch("B9"); return v == nil, err }},
			{"BatchByHash", func() (bool, error) { v, err := tx.BatchByHash("k", "h"); return v == "", err }},
		}
		for _, c := range checks {
			ok, err := c.got()
			if err != nil || !ok {
				t.Errorf("%s of nothing: absent %v, err %v; want absent and no error", c.what, ok, err)
			}
		}
		return nil
	})
}

func repoReservations(t *testing.T, r domain.Repo) {
	res := func(key, number, invoice string, created time.Time) *domain.Reservation {
		return &domain.Reservation{Key: key, ReservationNumber: number, Invoice: invoice, Currency: "EUR", Created: created,
			CustomerName: "Ann " + key, Requests: []domain.Request{{Key: key, Action: "Reserve"}, {Key: "U" + key, Action: "UpdateReservation"}},
			Transactions: []string{"T" + key}, Lines: []domain.Line{{ArticleNumber: "A", Price: dec("2.50"), Reserved: 2}}, LinesKnown: true}
	}
	update(t, r, func(tx domain.RepoTx) error {
		for _, x := range []*domain.Reservation{res("K2", "N2", "INV", t0), res("K1", "N1", "INV", t0.Add(time.Hour)), res("K3", "", "OTHER", t0)} {
			if created := must[bool](t)(tx.PutReservation(x)); !created {
				t.Errorf("PutReservation(%s) of a new key: created false", x.Key)
			}
		}
		again := res("K1", "N1", "INV", t0.Add(time.Hour))
		again.CustomerName = "Bea"
		if created := must[bool](t)(tx.PutReservation(again)); created {
			t.Error("PutReservation of a stored key: created true")
		}
		return nil
	})
	view(t, r, func(tx domain.RepoTx) error {
		got := must[*domain.Reservation](t)(tx.Reservation("K1"))
		if got == nil || got.CustomerName != "Bea" || len(got.Lines) != 1 || !got.Lines[0].Price.Equal(dec("2.5")) {
			t.Errorf("Reservation(K1) = %+v; want the last put", got)
		}
		if l := must[*domain.Reservation](t)(tx.ReservationLedger("K1")); l == nil || l.Key != "K1" || len(l.Lines) != 1 || l.ReservationNumber != "N1" {
			t.Errorf("ReservationLedger(K1) = %+v", l)
		}
		if k := must[string](t)(tx.ReservationKeyByNumber("N2")); k != "K2" {
			t.Errorf("ReservationKeyByNumber(N2) = %q", k)
		}
		if ks := must[[]string](t)(tx.ReservationKeysByInvoice("INV")); !slices.Equal(ks, []string{"K1", "K2"}) {
			t.Errorf("ReservationKeysByInvoice(INV) = %q; want key order", ks)
		}
		for key, want := range map[string]string{"K1": "K1", "UK2": "K2", "TK3": "K3"} {
			if k := must[string](t)(tx.OwnerOf(key)); k != want {
				t.Errorf("OwnerOf(%s) = %q, want %q", key, k, want)
			}
		}
		sums := must[[]domain.Summary](t)(tx.Summaries())
		var keys []string
		for _, s := range sums {
			keys = append(keys, s.Key)
		}
		if !slices.Equal(keys, []string{"K1", "K2", "K3"}) || sums[0].Customer != "Bea" {
			t.Errorf("Summaries = %+v; want K1 (Bea), K2, K3", sums)
		}
		return nil
	})
}

func repoDeleteReservation(t *testing.T, r domain.Repo) {
	update(t, r, func(tx domain.RepoTx) error {
		_ = must[bool](t)(tx.PutReservation(&domain.Reservation{Key: "order:INV", Invoice: "INV", Requests: []domain.Request{{Key: "D1"}}, Transactions: []string{"T1"}}))
		// The real reservation takes over T1.
		_ = must[bool](t)(tx.PutReservation(&domain.Reservation{Key: "K", Invoice: "INV", Transactions: []string{"T1"}}))
		return tx.DeleteReservation("order:INV")
	})
	view(t, r, func(tx domain.RepoTx) error {
		if x := must[*domain.Reservation](t)(tx.Reservation("order:INV")); x != nil {
			t.Error("the deleted reservation is still there")
		}
		if ks := must[[]string](t)(tx.ReservationKeysByInvoice("INV")); !slices.Equal(ks, []string{"K"}) {
			t.Errorf("ReservationKeysByInvoice after the delete = %q", ks)
		}
		if k := must[string](t)(tx.OwnerOf("D1")); k != "" {
			t.Errorf("OwnerOf(D1) = %q after its reservation was deleted", k)
		}
		if k := must[string](t)(tx.OwnerOf("T1")); k != "K" {
			t.Errorf("OwnerOf(T1) = %q; the lookup K took over must stay", k)
		}
		for _, s := range must[[]domain.Summary](t)(tx.Summaries()) {
			if s.Key == "order:INV" {
				t.Error("the deleted reservation's list row is still there")
			}
		}
		return nil
	})
}

func repoTransactions(t *testing.T, r domain.Repo) {
	update(t, r, func(tx domain.RepoTx) error {
		for _, x := range []*domain.Transaction{
			{Key: "C2", Kind: domain.KindCapture, Invoice: "INV", Amount: dec("10")},
			{Key: "C1", Kind: domain.KindCapture, Invoice: "INV", Amount: dec("5")},
			{Key: "G1", Kind: domain.KindGiftCardPay, Invoice: "INV", Amount: dec("3")},
			{Key: "G2", Kind: domain.KindGiftCardPay, Group: "G1", Amount: dec("4")},
		} {
			if created := must[bool](t)(tx.PutTransaction(x)); !created {
				t.Errorf("PutTransaction(%s) new: created false", x.Key)
			}
		}
		if created := must[bool](t)(tx.PutTransaction(&domain.Transaction{Key: "C1", Kind: domain.KindCapture, Invoice: "INV", Amount: dec("6")})); created {
			t.Error("PutTransaction of a stored key: created true")
		}
		for _, rk := range []string{"R2", "R1", "R2"} {
			if err := tx.LinkRefund("C1", rk); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, r, func(tx domain.RepoTx) error {
		if x := must[*domain.Transaction](t)(tx.Transaction("C1")); x == nil || !x.Amount.Equal(dec("6")) {
			t.Errorf("Transaction(C1) = %+v; want the last put", x)
		}
		if ks := must[[]string](t)(tx.TransactionKeysByInvoice("INV")); !slices.Equal(ks, []string{"C1", "C2"}) {
			t.Errorf("TransactionKeysByInvoice = %q; want the captures in key order, no gift card", ks)
		}
		if ks := must[[]string](t)(tx.RefundKeys("C1")); !slices.Equal(ks, []string{"R1", "R2"}) {
			t.Errorf("RefundKeys = %q; want each once, in key order", ks)
		}
		var keys []string
		for _, x := range must[[]*domain.Transaction](t)(tx.Transactions()) {
			keys = append(keys, x.Key)
		}
		if !slices.Equal(keys, []string{"C1", "C2", "G1", "G2"}) {
			t.Errorf("Transactions = %q", keys)
		}
		keys = nil
		for _, x := range must[[]*domain.Transaction](t)(tx.TransactionGroup("G1")) {
			keys = append(keys, x.Key)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"G1", "G2"}) {
			t.Errorf("TransactionGroup(G1) = %q", keys)
		}
		return nil
	})
}

func repoOrphans(t *testing.T, r domain.Repo) {
	update(t, r, func(tx domain.RepoTx) error {
		for _, o := range []*domain.OrphanRequest{{Request: domain.Request{Key: "D2", Action: "CancelReservation"}, Invoice: "INV"},
			{Request: domain.Request{Key: "D1"}, Invoice: "INV"}, {Request: domain.Request{Key: "D3"}}} {
			if err := tx.PutOrphan(o); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, r, func(tx domain.RepoTx) error {
		if o := must[*domain.OrphanRequest](t)(tx.Orphan("D2")); o == nil || o.Action != "CancelReservation" || o.Invoice != "INV" {
			t.Errorf("Orphan(D2) = %+v", o)
		}
		if ks := must[[]string](t)(tx.OrphanKeysByInvoice("INV")); !slices.Equal(ks, []string{"D1", "D2"}) {
			t.Errorf("OrphanKeysByInvoice = %q", ks)
		}
		return tx.DeleteOrphan("D1")
	})
	view(t, r, func(tx domain.RepoTx) error {
		if o := must[*domain.OrphanRequest](t)(tx.Orphan("D1")); o != nil {
			t.Error("a deleted orphan is still there")
		}
		if ks := must[[]string](t)(tx.OrphanKeysByInvoice("INV")); !slices.Equal(ks, []string{"D2"}) {
			t.Errorf("OrphanKeysByInvoice after the delete = %q", ks)
		}
		return nil
	})
}

func repoPushes(t *testing.T, r domain.Repo) {
	var ids []uint64
	update(t, r, func(tx domain.RepoTx) error {
		for i, key := range []string{"A", "B", "A"} {
			rec := &domain.PushRecord{Key: key, Hash: [32]byte{byte(i)}, Body: []byte(`{"x":1}`), Applied: i == 0, ReservationKey: "R"}
			enc := domain.PushEncoding{}
			if i == 2 {
				enc = r.EncodePush(rec) // with and without what the engine prepares
			}
			id := must[uint64](t)(tx.AppendPush(rec, enc))
			if id != rec.ID || (len(ids) > 0 && id <= ids[len(ids)-1]) {
				t.Errorf("AppendPush = %d (rec.ID %d) after %v; want rising IDs, set in rec", id, rec.ID, ids)
			}
			ids = append(ids, id)
		}
		return nil
	})
	view(t, r, func(tx domain.RepoTx) error {
		if id := must[uint64](t)(tx.PushDuplicate("A", [32]byte{2})); id != ids[2] {
			t.Errorf("PushDuplicate(A, 2) = %d, want %d", id, ids[2])
		}
		if id := must[uint64](t)(tx.PushDuplicate("B", [32]byte{2})); id != 0 {
			t.Errorf("PushDuplicate of another key's hash = %d, want 0", id)
		}
		if got := must[[]uint64](t)(tx.PushIDsOf("A")); !slices.Equal(got, []uint64{ids[0], ids[2]}) {
			t.Errorf("PushIDsOf(A) = %v", got)
		}
		p := must[*domain.PushRecord](t)(tx.Push(ids[0]))
		if p == nil || p.Key != "A" || !p.Applied || p.ReservationKey != "R" || string(p.Body) != `{"x":1}` {
			t.Errorf("Push(%d) = %+v", ids[0], p)
		}
		if p := must[*domain.PushRecord](t)(tx.Push(ids[2])); p == nil || p.ID != ids[2] || p.Hash != [32]byte{2} {
			t.Errorf("Push(%d) stored with an encoding = %+v", ids[2], p)
		}
		ps := must[[]*domain.PushRecord](t)(tx.PushesBefore(ids[2], 0))
		if len(ps) != 2 || ps[0].ID != ids[1] || ps[1].ID != ids[0] {
			t.Errorf("PushesBefore(%d) = %d pushes; want the two before, newest first", ids[2], len(ps))
		}
		if ps := must[[]*domain.PushRecord](t)(tx.PushesBefore(0, 1)); len(ps) != 1 || ps[0].ID != ids[2] {
			t.Errorf("PushesBefore(0, 1) = %v; want the newest", ps)
		}
		return nil
	})
}

func repoRejected(t *testing.T, r domain.Repo) {
	var first, second uint64
	update(t, r, func(tx domain.RepoTx) error {
		first = must[uint64](t)(tx.AppendRejected(&domain.PushRecord{RemoteAddr: "1.2.3.4:5", Rejected: true, Count: 3, Reason: "signature"}))
		second = must[uint64](t)(tx.AppendRejected(&domain.PushRecord{RemoteAddr: "5.6.7.8:9", Rejected: true, Count: 1}))
		if err := tx.SetRejectedGroupEntry("1.2.3.4", "sig", first); err != nil {
			return err
		}
		if n := must[int](t)(tx.RejectedEntries()); n != 2 {
			t.Errorf("RejectedEntries = %d, want 2", n)
		}
		return nil
	})
	update(t, r, func(tx domain.RepoTx) error {
		if o := must[*domain.PushRecord](t)(tx.OldestRejected()); o == nil || o.ID != first || o.Count != 3 {
			t.Errorf("OldestRejected = %+v, want entry %d", o, first)
		}
		if g := must[uint64](t)(tx.RejectedGroupEntry("1.2.3.4", "sig")); g != first {
			t.Errorf("RejectedGroupEntry = %d, want %d", g, first)
		}
		if err := tx.DeleteRejected(first); err != nil {
			return err
		}
		if err := tx.DeleteRejected(first); err != nil { // nothing the second time
			return err
		}
		if n := must[int](t)(tx.RejectedEntries()); n != 1 {
			t.Errorf("RejectedEntries after a delete (twice) = %d, want 1", n)
		}
		return tx.DeleteRejectedGroup("1.2.3.4", "sig")
	})
	view(t, r, func(tx domain.RepoTx) error {
		if g := must[uint64](t)(tx.RejectedGroupEntry("1.2.3.4", "sig")); g != 0 {
			t.Errorf("a deleted group's entry = %d", g)
		}
		if rs := must[[]*domain.PushRecord](t)(tx.RejectedNewest(0)); len(rs) != 1 || rs[0].ID != second {
			t.Errorf("RejectedNewest = %v; want entry %d only", rs, second)
		}
		if x := must[*domain.PushRecord](t)(tx.Rejected(second)); x == nil || x.RemoteAddr != "5.6.7.8:9" {
			t.Errorf("Rejected(%d) = %+v", second, x)
		}
		return nil
	})
}

func repoExchanges(t *testing.T, r domain.Repo) {
	update(t, r, func(tx domain.RepoTx) error {
		for i := range 5 {
			x := &domain.Exchange{Action: "Pay", HTTPStatus: 200 + i}
			if id := must[uint64](t)(tx.AppendExchange(x, 3)); id != x.ID {
				t.Errorf("AppendExchange = %d, x.ID %d", id, x.ID)
			}
		}
		return nil
	})
	view(t, r, func(tx domain.RepoTx) error {
		xs := must[[]domain.Exchange](t)(tx.Exchanges(0))
		var got []int
		for _, x := range xs {
			got = append(got, x.HTTPStatus)
		}
		if !slices.Equal(got, []int{204, 203, 202}) {
			t.Errorf("Exchanges = %v; want the 3 kept, newest first", got)
		}
		if xs := must[[]domain.Exchange](t)(tx.Exchanges(1)); len(xs) != 1 || xs[0].HTTPStatus != 204 {
			t.Errorf("Exchanges(1) = %v", xs)
		}
		return nil
	})
}

func repoOps(t *testing.T, r domain.Repo) {
	var ids []uint64
	update(t, r, func(tx domain.RepoTx) error {
		for i, st := range []domain.OpState{domain.OpPending, domain.OpSettled, domain.OpSent} {
			id := must[uint64](t)(tx.NextOpID())
			if len(ids) > 0 && id <= ids[len(ids)-1] {
				t.Errorf("NextOpID = %d after %v", id, ids)
			}
			ids = append(ids, id)
			op := &domain.PendingOp{ID: id, Action: "Pay", Invoice: "INV", State: st, Amount: dec("1.10")}
			if i == 2 {
				op.ResultKey = "RK"
			}
			if err := tx.PutOp(op); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, r, func(tx domain.RepoTx) error {
		open := must[[]domain.OpenOp](t)(tx.OpenOps())
		want := []domain.OpenOp{{ID: ids[0], Invoice: "INV"}, {ID: ids[2], ResultKey: "RK", Invoice: "INV"}}
		if !slices.Equal(open, want) {
			t.Errorf("OpenOps = %+v, want %+v", open, want)
		}
		op := must[*domain.PendingOp](t)(tx.Op(ids[0]))
		if op == nil || !op.Amount.Equal(dec("1.1")) {
			t.Fatalf("Op(%d) = %+v", ids[0], op)
		}
		op.State = domain.OpFailed
		return tx.PutOp(op)
	})
	view(t, r, func(tx domain.RepoTx) error {
		if open := must[[]domain.OpenOp](t)(tx.OpenOps()); len(open) != 1 || open[0].ID != ids[2] {
			t.Errorf("OpenOps after one closed = %+v", open)
		}
		var got []uint64
		for _, op := range must[[]*domain.PendingOp](t)(tx.Ops()) {
			got = append(got, op.ID)
		}
		if !slices.Equal(got, []uint64{ids[2], ids[1], ids[0]}) {
			t.Errorf("Ops = %v; want newest first", got)
		}
		return nil
	})
}

func repoAudit(t *testing.T, r domain.Repo) {
	keys := &testSealer{}
	update(t, r, func(tx domain.RepoTx) error {
		a := must[domain.AuditEntry](t)(tx.AppendAudit(domain.AuditEntry{Time: t0, Action: "Pay", Target: "INV", Amount: dec("2")}, nil))
		b := must[domain.AuditEntry](t)(tx.AppendAudit(domain.AuditEntry{Time: t0, Action: "Refund", Completes: a.ID}, keys))
		if a.Prev != "" || b.ID != a.ID+1 || b.KeyID == "" || b.MAC == "" {
			t.Errorf("AppendAudit = %+v then %+v; want the first unchained, the second next and keyed", a, b)
		}
		return nil
	})
	view(t, r, func(tx domain.RepoTx) error {
		var stored [][]byte
		var ids []uint64
		err := tx.WalkAudit(false, func(id uint64, e *domain.AuditEntry, v []byte, err error) bool {
			if err != nil || e.ID != id {
				t.Errorf("WalkAudit: entry %d = %+v, %v", id, e, err)
			}
			ids, stored = append(ids, id), append(stored, slices.Clone(v))
			return true
		})
		if err != nil {
			return err
		}
		if len(stored) != 2 {
			t.Fatalf("WalkAudit saw %d entries, want 2", len(stored))
		}
		second := must[*domain.AuditEntry](t)(tx.AuditEntry(ids[1]))
		if second == nil || second.Prev != domain.ChainHash(stored[0]) {
			t.Errorf("the second entry's Prev = %+v; want the hash of the first as stored", second)
		}
		if len(keys.sealed) != 1 || string(stored[1]) != string(keys.sealed[0]) {
			t.Errorf("the keyed entry is stored as %s; want what the sealer made, %s", stored[1], keys.sealed)
		}
		if last := must[*domain.AuditEntry](t)(tx.LastAudit()); last == nil || last.ID != ids[1] || last.Action != "Refund" {
			t.Errorf("LastAudit = %+v", last)
		}
		if seq := must[uint64](t)(tx.AuditSequence()); seq != ids[1] {
			t.Errorf("AuditSequence = %d, want %d", seq, ids[1])
		}
		var newest []uint64
		_ = tx.WalkAudit(true, func(id uint64, _ *domain.AuditEntry, _ []byte, _ error) bool {
			newest = append(newest, id)
			return false
		})
		if !slices.Equal(newest, ids[1:]) {
			t.Errorf("WalkAudit newest first, stopped after one = %v", newest)
		}
		return nil
	})
}

func repoOrders(t *testing.T, r domain.Repo) {
	update(t, r, func(tx domain.RepoTx) error {
		for _, o := range []*domain.Order{{Invoice: "I2", Currency: "EUR"}, {Invoice: "I1", Currency: "EUR"}} {
			if err := tx.PutOrder(o); err != nil {
				return err
			}
		}
		if err := tx.PutOrder(&domain.Order{Invoice: "I1", Currency: "SEK", ReservationKey: "K"}); err != nil {
			return err
		}
		for _, o := range []*domain.Order{{Invoice: "I1", Hash: "h2"}, {Invoice: "I1", Hash: "h1"}, {Invoice: "I2", Hash: "h1"}, {Invoice: "I1", Hash: "h1"}} {
			if err := tx.PutOrderConflict(o); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, r, func(tx domain.RepoTx) error {
		if o := must[*domain.Order](t)(tx.Order("I1")); o == nil || o.Currency != "SEK" || o.ReservationKey != "K" {
			t.Errorf("Order(I1) = %+v; want the last put", o)
		}
		var got []string
		for _, o := range must[[]*domain.Order](t)(tx.Orders()) {
			got = append(got, o.Invoice)
		}
		if !slices.Equal(got, []string{"I1", "I2"}) {
			t.Errorf("Orders = %q", got)
		}
		got = nil
		for _, o := range must[[]*domain.Order](t)(tx.OrderConflicts("I1")) {
			got = append(got, o.Hash)
		}
		if !slices.Equal(got, []string{"h1", "h2"}) {
			t.Errorf("OrderConflicts(I1) = %q; want each once, by hash", got)
		}
		if all := must[[]*domain.Order](t)(tx.OrderConflicts("")); len(all) != 3 {
			t.Errorf("OrderConflicts of every invoice = %d, want 3", len(all))
		}
		return nil
	})
}

func repoBatches(t *testing.T, r domain.Repo) {
	var id string
	update(t, r, func(tx domain.RepoTx) error {
		n := must[uint64](t)(tx.NextBatchNumber())
		if m := must[uint64](t)(tx.NextBatchNumber()); m <= n {
			t.Errorf("NextBatchNumber = %d after %d", m, n)
		}
		b := &domain.Batch{ID: "B" + strconv.FormatUint(n, 10), Kind: domain.BatchCapture, Hash: "abc", Total: dec("12.50"), Created: t0}
		id = b.ID
		if err := tx.PutBatch(b); err != nil {
			return err
		}
		for _, i := range []int{2, 0, 1, 0} {
			if err := tx.PutBatchItem(id, domain.BatchItem{Index: i, Reservation: "R" + strconv.Itoa(i)}); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, r, func(tx domain.RepoTx) error {
		if b := must[*domain.Batch](t)(tx.Batch(id)); b == nil || !b.Total.Equal(dec("12.5")) {
			t.Errorf("Batch(%s) = %+v", id, b)
		}
		if got := must[string](t)(tx.BatchByHash(domain.BatchCapture, "abc")); got != id {
			t.Errorf("BatchByHash = %q, want %q", got, id)
		}
		var idx []int
		for _, it := range must[[]domain.BatchItem](t)(tx.BatchItems(id)) {
			idx = append(idx, it.Index)
		}
		if !slices.Equal(idx, []int{0, 1, 2}) {
			t.Errorf("BatchItems = %v; want each index once, in order", idx)
		}
		if bs := must[[]domain.Batch](t)(tx.Batches()); len(bs) != 1 || bs[0].ID != id {
			t.Errorf("Batches = %+v", bs)
		}
		return nil
	})
}

func repoTally(t *testing.T, r domain.Repo) {
	update(t, r, func(tx domain.RepoTx) error {
		return tx.AddTally(domain.Tally{Pushes: 3, Rejected: 2, Reservations: 2, Transactions: 1})
	})
	update(t, r, func(tx domain.RepoTx) error { return tx.AddTally(domain.Tally{Pushes: 1, Reservations: -1}) })
	view(t, r, func(tx domain.RepoTx) error {
		if got, want := must[domain.Tally](t)(tx.Tally()), (domain.Tally{Pushes: 4, Rejected: 2, Reservations: 1, Transactions: 1}); got != want {
			t.Errorf("Tally = %+v, want %+v", got, want)
		}
		return nil
	})
}

func repoRollback(t *testing.T, r domain.Repo) {
	errStop := fmt.Errorf("stop")
	err := r.Update(context.Background(), func(tx domain.RepoTx) error {
		if _, err := tx.PutReservation(&domain.Reservation{Key: "K", Invoice: "INV"}); err != nil {
			return err
		}
		if _, err := tx.AppendPush(&domain.PushRecord{Key: "K", Hash: [32]byte{9}}, domain.PushEncoding{}); err != nil {
			return err
		}
		// The transaction sees its own writes.
		if x, err := tx.Reservation("K"); err != nil || x == nil {
			t.Errorf("a write is not seen by its own transaction: %v, %v", x, err)
		}
		return errStop
	})
	if err != errStop {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	view(t, r, func(tx domain.RepoTx) error {
		if x := must[*domain.Reservation](t)(tx.Reservation("K")); x != nil {
			t.Error("a rolled-back reservation is stored")
		}
		if ks := must[[]string](t)(tx.ReservationKeysByInvoice("INV")); len(ks) != 0 {
			t.Errorf("a rolled-back invoice lookup: %q", ks)
		}
		if id := must[uint64](t)(tx.PushDuplicate("K", [32]byte{9})); id != 0 {
			t.Error("a rolled-back push is stored")
		}
		return nil
	})
}
