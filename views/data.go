package views

import "paydesk/store"

// Data messages: the console loads from the cache (in a command) and hands
// the screens what they show.
type (
	// ReservationRowsMsg replaces the reservation rows (Full) or inserts and
	// replaces the given ones (by key).
	ReservationRowsMsg struct {
		Full bool
		Rows []*ReservationRow
		// Removed are keys of rows that are gone (patches only).
		Removed []string
		Err     error
	}
	// AttentionReservationsMsg gives the attention tab the reservations it
	// looks at (near the end of their window, order mismatches), replacing
	// the ones it had.
	AttentionReservationsMsg struct {
		Rows []*ReservationRow
		Err  error
		// Beyond says what the cap on the rows read left out: the creation
		// time of the oldest reservation near its window's end not given
		// (zero when none was left out), and whether order mismatches were
		// left out. The tab's count is then a floor ("1000+").
		Beyond AttentionBeyond
	}
	// AttentionTransactionsMsg gives the attention tab the gift card
	// payments it looks at (the transactions list reads its own pages).
	AttentionTransactionsMsg struct {
		Rows []*TransactionRow
		Err  error
	}
	// TransactionRowsMsg replaces (Full) or upserts transactions.
	TransactionRowsMsg struct {
		Full bool
		Rows []*TransactionRow
		Err  error
	}
	// PushRowsMsg replaces (Full) or adds pushes, accepted and rejected.
	PushRowsMsg struct {
		Full bool
		Rows []*PushRow
		Err  error
	}
	// AuditRowsMsg replaces the audit log rows.
	AuditRowsMsg struct {
		Rows []store.AuditEntry
		Err  error
	}
	// ExchangeRowsMsg replaces the gateway log rows.
	ExchangeRowsMsg struct {
		Rows []store.Exchange
		Err  error
	}

	// ReservationDetailMsg carries everything the reservation page shows.
	ReservationDetailMsg struct {
		Ref          string // what was asked for (key or number)
		Reservation  *store.Reservation
		Transactions []*store.Transaction // oldest first
		Pushes       []*store.PushRecord  // oldest first
		Ops          []*store.PendingOp   // its open operations
		// Conflicts are orders the intake refused for this invoice because
		// their lines differ from the ones in effect.
		Conflicts []*store.Order
		Err       error
	}
	// TransactionDetailMsg carries a transaction and the ones linked to it.
	TransactionDetailMsg struct {
		Key         string
		Transaction *store.Transaction
		Original    *store.Transaction   // what a refund refunds
		Refunds     []*store.Transaction // refunds against a payment
		Group       []*store.Transaction // the other partial payments of its group
		Pushes      []*store.PushRecord
		Err         error
	}
)
