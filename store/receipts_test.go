package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

// receive applies p as received at at from remote, as the listener does.
func receive(t *testing.T, db *DB, p *api.Push, at time.Time, remote string) ApplyResult {
	t.Helper()
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.ApplyPush(context.Background(), PushRecord{ReceivedAt: at, RemoteAddr: remote, Body: body, Method: "POST", URL: "/push"}, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func receiptsOf(t *testing.T, db *DB, id uint64) PushReceipts {
	t.Helper()
	p, err := db.Push(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.PushReceiptsOf(t.Context(), []*PushRecord{p})
	if err != nil {
		t.Fatal(err)
	}
	return m[id]
}

// TestPushReceipts: every receipt of a push is kept against the push
// stored first — the first costs nothing, each repeat is counted with its
// time, source and verdict — and what is kept in full is bounded however
// often the push comes. Both engines (PAYDESK_STORE_BACKEND=postgres).
func TestPushReceipts(t *testing.T) {
	g := &gw{clock: t0}
	tests := []struct {
		name    string
		repeats int
		want    int64 // receipts counted, the first included
		kept    int   // receipts listed in full, the first included
		omitted int64
	}{
		{"once", 0, 1, 1, 0},
		{"twice", 1, 2, 2, 0},
		{"up to the bound", MaxPushReceipts, MaxPushReceipts + 1, MaxPushReceipts + 1, 0},
		{"past the bound", MaxPushReceipts + 15, MaxPushReceipts + 16, MaxPushReceipts + 1, 15},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t)
			p := txPush(g.key(), "INV-R", "customgiftcard", api.TypeGiftCardPay, dec("10"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil)
			first := t0.Add(time.Hour)
			res := receive(t, db, p, first, "192.0.2.1:4000")
			if res.Duplicate || res.ID == 0 {
				t.Fatalf("first receipt: %+v", res)
			}
			for i := 1; i <= tc.repeats; i++ {
				r := receive(t, db, p, first.Add(time.Duration(i)*time.Minute), fmt.Sprintf("192.0.2.%d:4000", i+1))
				if !r.Duplicate || r.ID != res.ID {
					t.Fatalf("repeat %d: %+v, want a duplicate of push %d", i, r, res.ID)
				}
			}
			got := receiptsOf(t, db, res.ID)
			if got.Count != tc.want || len(got.Receipts) != tc.kept || got.Omitted != tc.omitted {
				t.Fatalf("receipts: count %d, %d listed, %d omitted; want %d, %d, %d", got.Count, len(got.Receipts), got.Omitted, tc.want, tc.kept, tc.omitted)
			}
			if r := got.Receipts[0]; !r.At.Equal(first) || r.RemoteAddr != "192.0.2.1:4000" || r.Signature != SignatureValid {
				t.Errorf("first receipt %+v, want the push's own (%v from 192.0.2.1:4000, valid)", r, first)
			}
			last := first.Add(time.Duration(tc.repeats) * time.Minute)
			if !got.Last.Equal(last) {
				t.Errorf("last receipt at %v, want %v", got.Last, last)
			}
			if tc.repeats > 0 {
				r := got.Receipts[len(got.Receipts)-1]
				if !r.At.Equal(last) || r.RemoteAddr != fmt.Sprintf("192.0.2.%d:4000", tc.repeats+1) || r.Signature != SignatureValid {
					t.Errorf("newest receipt %+v, want %v from 192.0.2.%d:4000, valid", r, last, tc.repeats+1)
				}
				// Oldest first after the push's own: the kept ones are the newest.
				for i := 2; i < len(got.Receipts); i++ {
					if !got.Receipts[i].At.After(got.Receipts[i-1].At) {
						t.Fatalf("receipts out of order at %d: %v after %v", i, got.Receipts[i].At, got.Receipts[i-1].At)
					}
				}
			}
			// One push in the log whatever the repeats.
			ps, err := db.Pushes(t.Context(), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 {
				t.Errorf("%d pushes in the log, want 1", len(ps))
			}
		})
	}
}

// TestPushReceiptsNotify: a repeat tells the console (a Change with
// Receipts), which otherwise would not know to show ×2.
func TestPushReceiptsNotify(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	p := txPush(g.key(), "INV-N", "customgiftcard", api.TypeGiftCardPay, dec("10"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil)
	receive(t, db, p, t0, "192.0.2.1:1")
	ch, stop := db.Subscribe()
	defer stop()
	receive(t, db, p, t0.Add(time.Second), "192.0.2.1:2")
	deadline := time.NewTimer(30 * time.Second) // only a stuck test waits this long
	defer deadline.Stop()
	for {
		select {
		case c := <-ch:
			if c.Receipts > 0 {
				if len(c.ReceiptKeys) != 1 || c.ReceiptKeys[0] != p.Key() {
					t.Fatalf("change names %v, want the repeated push's key %s", c.ReceiptKeys, p.Key())
				}
				return
			}
		case <-deadline.C:
			t.Fatal("no change with Receipts after a repeated push")
		}
	}
}

// TestChangeReceiptKeys: a commit's change names the keys of the pushes
// repeated, each once, up to the bound; past it none (read them all).
func TestChangeReceiptKeys(t *testing.T) {
	var c Change
	c.addReceipt("A")
	c.addReceipt("A")
	c.addReceipt("B")
	if c.Receipts != 3 || strings.Join(c.ReceiptKeys, ",") != "A,B" {
		t.Fatalf("receipts %d keys %v, want 3 and A,B", c.Receipts, c.ReceiptKeys)
	}
	for i := 0; i < maxReceiptKeys; i++ {
		c.addReceipt(fmt.Sprint("K", i))
	}
	c.addReceipt("A")
	if c.Receipts != 3+maxReceiptKeys+1 || c.ReceiptKeys != nil {
		t.Fatalf("past the bound: receipts %d keys %d, want %d and none", c.Receipts, len(c.ReceiptKeys), 3+maxReceiptKeys+1)
	}
}

// TestInboxRecordsReceipts: on a team's database a listener's repeat is
// refused at the inbox, before the rules; it is still counted against the
// push, in the same batch or a later one.
func TestInboxRecordsReceipts(t *testing.T) {
	pgtest.OwnEngine(t)
	db, _ := openShared2(t)
	db.StartApplier(t.Logf)
	g := &gw{clock: t0}
	p := txPush(g.key(), "INV-I", "customgiftcard", api.TypeGiftCardPay, dec("10"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil)
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		rec := PushRecord{ReceivedAt: t0.Add(time.Duration(i) * time.Minute), RemoteAddr: fmt.Sprintf("192.0.2.%d:1", i+1), Body: body, Method: "POST", URL: "/push"}
		in, err := db.IngestPush(context.Background(), rec, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if in.Duplicate != (i > 0) {
			t.Fatalf("receipt %d: duplicate %v", i+1, in.Duplicate)
		}
	}
	waitApplied(t, db, 30*time.Second)
	ps, err := db.Pushes(t.Context(), 0, 0)
	if err != nil || len(ps) != 1 {
		t.Fatalf("push log: %d pushes, %v; want 1", len(ps), err)
	}
	got := receiptsOf(t, db, ps[0].ID)
	if got.Count != 3 || len(got.Receipts) != 3 {
		t.Fatalf("receipts: count %d, %d listed; want 3 and 3", got.Count, len(got.Receipts))
	}
	if r := got.Receipts[2]; !r.At.Equal(t0.Add(2*time.Minute)) || r.RemoteAddr != "192.0.2.3:1" {
		t.Errorf("newest receipt %+v, want the third", r)
	}
}
