package store

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

// TestCopyIntoOwnsOwnKeys: a file keeps no key owner entry for a
// reservation's own key (layout 12); copied into a team's database, the
// native engine's key owners name it, as its own writes do, beside the
// entries the file has.
func TestCopyIntoOwnsOwnKeys(t *testing.T) {
	pgtest.OwnEngine(t)
	src, err := Open(filepath.Join(t.TempDir(), "paydesk.db"), Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	st := Status{Code: api.StatusSuccess, Time: t0}
	rs := []*Reservation{
		{Key: "K1", Invoice: "INV1", Currency: "EUR", Created: t0, Status: st,
			Requests: []Request{{Key: "K1", Action: api.ActionReserve, Status: st}, {Key: "D1", Action: api.ActionCancelReservation, Status: st}}},
		{Key: "K2", Invoice: "INV2", Currency: "EUR", Created: t0, Status: st,
			Requests: []Request{{Key: "K2", Action: api.ActionReserve, Status: st}}},
	}
	if err := src.PutReservations(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
	dsn := pgtest.Fresh(t)
	if err := src.CopyInto(t.Context(), dsn, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), `SELECT key || ' ' || reservation_key FROM paydesk_key_owners ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"D1 K1", "K1 K1", "K2 K2"}; !slices.Equal(got, want) {
		t.Errorf("key owners after the copy: %q, want %q", got, want)
	}
}
