package store

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/query"
	"paydesk/store/domain"
)

// pushLogData writes n pushes of every sort into db — data requests and
// transactions, statuses of each class, services, amounts, repeats, some
// received at the same instant — and a few rejected requests. It returns
// the whole log as the store reads it back (times as the engine keeps
// them).
func pushLogData(t testing.TB, db *DB, n int) []*PushRecord {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(26))
	pick := func(s ...string) string { return s[rng.Intn(len(s))] }
	codes := []int{api.StatusSuccess, api.StatusSuccess, 791, 490, 690}
	at := t0.Add(-48 * time.Hour)
	for i := range n {
		if rng.Intn(4) != 0 { // a quarter share their instant with the last
			at = at.Add(time.Duration(rng.Intn(600)) * time.Second)
		}
		key := fmt.Sprintf("%032X", 1+rng.Intn(n/3+1))
		code := codes[rng.Intn(len(codes))]
		st := api.Status{Code: api.Code{Code: code, Description: api.StatusText(code)}, DateTime: api.NewDateTime(at.Add(-time.Duration(i)), true)}
		var p *api.Push
		if rng.Intn(3) == 0 {
			p = dataPush(key, "INV-"+pick("Müller", "1", "22", "Straße"), pick(api.ActionReserve, api.ActionCancelReservation, api.ActionUpdateReservation), st)
		} else {
			p = txPush(key, "INV-"+pick("3", "Gruber", "crème"), pick(api.ServiceDeferred, "customgiftcard", "vouchera"),
				pick(api.TypeDeferredPay, api.TypeDeferredRefund, api.TypeGiftCardPay), decimal.New(int64(50+rng.Intn(500)), -2), st, nil)
		}
		body, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		rec := PushRecord{ReceivedAt: at, Body: body, Method: "POST", URL: "/push", RemoteAddr: "192.0.2.1:1"}
		if _, err := db.ApplyPush(ctx, rec, p); err != nil {
			t.Fatal(err)
		}
		if rng.Intn(12) == 0 {
			rec := PushRecord{ReceivedAt: at, Body: []byte("{bad"), Method: "POST", URL: "/push",
				RemoteAddr: fmt.Sprintf("198.51.100.%d:1", rng.Intn(200)), Reason: pick("signature mismatch", "malformed body")}
			if _, err := db.RecordRejectedPush(ctx, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	stored, err := db.Pushes(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rejected, err := db.RejectedPushes(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rejected {
		p.Rejected = true
	}
	return append(stored, rejected...)
}

func randomPushWhere(rng *rand.Rand) string {
	pick := func(s ...string) string { return s[rng.Intn(len(s))] }
	var parts []string
	if rng.Intn(3) == 0 {
		parts = append(parts, "state:"+pick(PushLogFilter.States...))
	}
	if rng.Intn(3) == 0 {
		parts = append(parts, "amount:"+pick(">", ">=", "<", "<=", "")+pick("1", "2.5", "0.5", "4.99"))
	}
	if rng.Intn(2) == 0 {
		parts = append(parts, "created:"+pick("<1h", "<12h", ">24h", "2026-03-01", "2026-02-28..2026-03-01", "<2026-03-01"))
	}
	if rng.Intn(3) == 0 {
		parts = append(parts, "service:"+pick("deferred", "customgift", "vouch", "nothing"))
	}
	if rng.Intn(3) == 0 {
		parts = append(parts, pick("muller", "mueller", "strasse", "creme", "C700", "reserve", "signature", `"inv-2"`, "0000"))
	}
	rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	return strings.Join(parts, " ")
}

func pushKeyed(p PushPage) keyedPage {
	k := keyedPage{total: p.Total, more: p.More, less: p.Less}
	for _, r := range p.Rows {
		k.keys = append(k.keys, fmt.Sprintf("%v/%d", r.Push.Rejected, r.Push.ID))
		k.pos = append(k.pos, r.Pos)
	}
	return k
}

// TestPushPageProperty: random filters of the language, envelopes, kinds
// and status classes over a log of every sort of push give the rows,
// order, cursors and counts of the reference pager (PagePushes) on the
// engine under test (bbolt, or the native PostgreSQL engine with
// PAYDESK_STORE_BACKEND=postgres), walked forwards, from the middle and
// backwards.
func TestPushPageProperty(t *testing.T) {
	db := openTest(t)
	all := pushLogData(t, db, 400)
	if db.repo.Capabilities().Pushes == nil {
		t.Fatal("the engine pages the push log in memory: it has no paged push query")
	}
	rng := rand.New(rand.NewSource(4))
	nonEmpty := 0
	for i := range 100 {
		text := randomPushWhere(rng)
		w, err := query.Parse(text, t0)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		var extra PushQuery
		if rng.Intn(4) == 0 {
			extra.Envelope = []string{api.EnvelopeDataRequest, api.EnvelopeTransaction}[rng.Intn(2)]
		}
		if rng.Intn(5) == 0 {
			extra.Kind = []string{api.TypeDeferredPay, api.ActionReserve, api.TypeGiftCardPay}[rng.Intn(3)]
		}
		if rng.Intn(4) == 0 {
			extra.Status = PushStatuses[rng.Intn(len(PushStatuses))]
		}
		with := func(q PageQuery) PushQuery { pq := extra; pq.PageQuery = q; return pq }
		base := PageQuery{Desc: rng.Intn(4) != 0, Where: w, Limit: 1 + rng.Intn(60)}
		if len(PagePushes(all, with(PageQuery{Where: w, Limit: domain.MaxPageLimit})).Rows) > 0 {
			nonEmpty++
		}
		if !sampled(i) {
			continue
		}
		t.Run(fmt.Sprintf("%d/%s/%s/%s/%s", i, text, extra.Envelope, extra.Kind, extra.Status), func(t *testing.T) {
			ctx := context.Background()
			checkPaging(t, base,
				func(q PageQuery) (keyedPage, error) {
					p, err := db.PushPage(ctx, with(q))
					return pushKeyed(p), err
				},
				func(q PageQuery) keyedPage { return pushKeyed(PagePushes(all, with(q))) },
				func(q PageQuery) (int, error) { return db.PushCount(ctx, with(q)) })
		})
	}
	if nonEmpty < 40 {
		t.Fatalf("only %d of 100 random filters found pushes: the test's data or filters drifted", nonEmpty)
	}
}

// TestPushPageNewestFirst pins the log's order on known pushes: newest
// first; of the same instant a rejected entry before the stored pushes,
// and the higher ID first; the count counts both logs.
func TestPushPageNewestFirst(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	g := &gw{clock: t0}
	at := []time.Time{t0, t0.Add(time.Minute), t0.Add(time.Minute), t0.Add(-time.Minute)}
	for i, a := range at {
		p := txPush(g.key(), fmt.Sprintf("INV-%d", i), api.ServiceDeferred, api.TypeDeferredPay, dec("1"), g.status(api.StatusSuccess, ""), nil)
		body, _ := p.Encode()
		if _, err := db.ApplyPush(ctx, PushRecord{ReceivedAt: a, Body: body, Method: "POST", URL: "/push"}, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.RecordRejectedPush(ctx, PushRecord{ReceivedAt: t0.Add(time.Minute), Body: []byte("x"), Reason: "malformed body", RemoteAddr: "192.0.2.9:1"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    PushQuery
		want string
	}{
		{PushQuery{PageQuery: PageQuery{Desc: true}}, "true/1 false/3 false/2 false/1 false/4"},
		{PushQuery{PageQuery: PageQuery{}}, "false/4 false/1 false/2 false/3 true/1"},
		{PushQuery{PageQuery: PageQuery{Desc: true, Limit: 2}}, "true/1 false/3"},
		{PushQuery{PageQuery: PageQuery{Desc: true}, Status: "rejected"}, "true/1"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			p, err := db.PushPage(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			k := pushKeyed(p)
			if got := strings.Join(k.keys, " "); got != tc.want {
				t.Errorf("rows %s, want %s", got, tc.want)
			}
			if tc.q.Limit == 0 {
				n, err := db.PushCount(ctx, tc.q)
				if err != nil || n != len(k.keys) {
					t.Errorf("count %d (%v), want %d", n, err, len(k.keys))
				}
			}
		})
	}
}
