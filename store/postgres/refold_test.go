package postgres

import (
	"context"
	"slices"
	"testing"

	"paydesk/store/domain"
	"paydesk/store/repotest"
)

// TestRefold: a database whose list texts an older folding wrote (no
// fold version, texts that "mueller" does not find) has them folded again
// (Refold, which the store's open runs), in chunks: then "mueller" finds
// Müller, and the version is recorded.
func TestRefold(t *testing.T) {
	ctx := context.Background()
	e := openNative(t)
	rs, again := repotest.ListData(300)
	for _, batch := range [][]*domain.Reservation{rs, again} {
		err := e.Update(ctx, func(tx domain.RepoTx) error {
			for _, r := range batch {
				if _, err := tx.PutReservation(r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var all []domain.Summary
	if err := e.View(ctx, func(tx domain.RepoTx) (err error) { all, err = tx.Summaries(); return err }); err != nil {
		t.Fatal(err)
	}
	q := domain.PageQuery{Filter: "mueller", Limit: 1000}
	want := domain.PageSummaries(all, q)
	for _, sql := range []string{"UPDATE paydesk_reservations SET search = 'old'", "UPDATE paydesk_transactions SET search = 'old'",
		"DELETE FROM paydesk_numbers WHERE name = 'fold-version'"} {
		if _, err := e.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	lists := e.Capabilities().Lists
	if p, _ := lists.ReservationPage(ctx, q); len(p.Rows) != 0 || len(want.Rows) == 0 {
		t.Fatalf("old texts found %d rows; the data has %d", len(p.Rows), len(want.Rows))
	}
	if err := e.Refold(ctx, 50); err != nil {
		t.Fatal(err)
	}
	p, err := lists.ReservationPage(ctx, q)
	if err != nil || !slices.Equal(rowKeys(p), rowKeys(want)) {
		t.Fatalf("after the refold: %d rows (%v), want %d", len(p.Rows), err, len(want.Rows))
	}
	var v int64
	if err := e.Pool().QueryRow(ctx, "SELECT last FROM paydesk_numbers WHERE name = 'fold-version'").Scan(&v); err != nil || v < 1 {
		t.Fatalf("fold version %d (%v) recorded", v, err)
	}
}

// rowKeys are a page's reservation keys in order.
func rowKeys(p domain.Page) []string {
	out := make([]string, len(p.Rows))
	for i, r := range p.Rows {
		out[i] = r.Summary.Key
	}
	return out
}
