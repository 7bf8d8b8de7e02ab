package store

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

// TestRelationalShowMatchesSQL (issue 25, point 2): on the native engine,
// after captures and refunds made through paydesk, psql's
// `SELECT captured, refunded FROM paydesk_reservations WHERE invoice = '…'`
// answers what `paydesk show` shows (the reservation's CapturedAmount and
// RefundedAmount). On the kv engine the table stays empty: no row.
func TestRelationalShowMatchesSQL(t *testing.T) {
	url := pgtest.Fresh(t)
	db, err := Open(url, Options{NoSync: true, Now: func() time.Time { return t0 }, Relational: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(ctx) })

	s := newScenario(t, db, &gw{clock: t0}, "INV-SQL-1")
	cl := func(n string, q int) api.CaptureLine { return api.CaptureLine{ArticleNumber: n, Quantity: q} }
	var first string
	for _, step := range []struct {
		name               string
		do                 func()
		captured, refunded string
	}{
		{"reserved", func() { s.reserve(articles(), true) }, "0.00", "0.00"},
		{"captured in part", func() { first = s.capture("39.98", true, cl("A", 2)) }, "39.98", "0.00"},
		{"captured more", func() { s.capture("79.95", true, cl("B", 1), cl("D", 1)) }, "119.93", "0.00"},
		{"refunded", func() { s.refund(first, "19.99", true) }, "119.93", "19.99"},
		{"refunded again", func() { s.refund(first, "19.99", true) }, "119.93", "39.98"},
	} {
		step.do()
		r, err := db.Reservation(s.inv)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		var captured, refunded string
		if err := conn.QueryRow(ctx, `SELECT captured::text, refunded::text FROM paydesk_reservations WHERE invoice = $1`, s.inv).
			Scan(&captured, &refunded); err != nil {
			t.Fatalf("%s: psql: %v", step.name, err)
		}
		show := [2]string{r.CapturedAmount.StringFixed(2), r.RefundedAmount.StringFixed(2)}
		if show != [2]string{step.captured, step.refunded} {
			t.Errorf("%s: show says captured %s refunded %s, want %s %s", step.name, show[0], show[1], step.captured, step.refunded)
		}
		if [2]string{captured, refunded} != show {
			t.Errorf("%s: SQL says captured %s refunded %s, show %s %s", step.name, captured, refunded, show[0], show[1])
		}
	}
}
