package postgres

import (
	"context"
	"testing"

	"paydesk/store/domain"
)

// The apply transaction's marking of its inbox rows and a writer's
// counters need no round trip of their own: with the transaction's
// context cancelled they still return nil (nothing went to the server),
// and the commit writes them.
func TestInboxMarkAndTallyAreQueued(t *testing.T) {
	e := openNative(t)
	ctx := context.Background()
	var id int64
	if err := e.Pool().QueryRow(ctx, `INSERT INTO paydesk_push_inbox (key, hash, rec) VALUES ('K', '\x01', '\x02') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		mark  int64 // the push ID to mark the row with; 0: not marked
		tally domain.Tally
	}{
		{"the inbox row and two counters", 7, domain.Tally{Pushes: 2, Transactions: 1}},
		{"every counter, one of them down", 0, domain.Tally{Pushes: 1, Rejected: 3, Reservations: -1, Transactions: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tally := func() domain.Tally {
				var d domain.Tally
				if err := e.ViewTx(ctx, func(tx *Tx) error { var err error; d, err = tx.Tally(); return err }); err != nil {
					t.Fatal(err)
				}
				return d
			}
			before := tally()
			err := e.UpdateTx(ctx, func(tx *Tx) error {
				live := tx.ctx
				cancelled, cancel := context.WithCancel(ctx)
				cancel()
				tx.ctx = cancelled
				if tc.mark != 0 {
					if err := tx.InboxMark([]int64{id}, []int64{tc.mark}, [][]byte{{1}}); err != nil {
						t.Fatalf("InboxMark went to the database: %v", err)
					}
				}
				if err := tx.AddTally(tc.tally); err != nil {
					t.Fatalf("AddTally went to the database: %v", err)
				}
				tx.ctx = live
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if tc.mark != 0 {
				var pushID *int64
				if err := e.Pool().QueryRow(ctx, `SELECT push_id FROM paydesk_push_inbox WHERE id = $1`, id).Scan(&pushID); err != nil {
					t.Fatal(err)
				}
				if pushID == nil || *pushID != tc.mark {
					t.Errorf("the row's push_id is %v, want %d", pushID, tc.mark)
				}
			}
			want := domain.Tally{Pushes: before.Pushes + tc.tally.Pushes, Rejected: before.Rejected + tc.tally.Rejected,
				Reservations: before.Reservations + tc.tally.Reservations, Transactions: before.Transactions + tc.tally.Transactions}
			if got := tally(); got != want {
				t.Errorf("counters %+v, want %+v", got, want)
			}
		})
	}
}
