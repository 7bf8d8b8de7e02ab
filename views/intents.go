package views

import "paydesk/store"

// Intent is a message a screen emits to ask the console to do something it
// must not do itself: open a page, run an operation, write a file.
type Intent interface{ intent() }

// Navigation intents: the console loads the data and opens the page.
type (
	// OpenReservation opens the detail of a reservation (key or number).
	OpenReservation struct{ Key string }
	// OpenTransaction opens the detail of a transaction.
	OpenTransaction struct{ Key string }
	// OpenPush opens the detail of a stored or rejected push (the list
	// holds the whole record, so nothing needs loading).
	OpenPush struct{ Push *store.PushRecord }
)

// Operation intents: the console opens the matching form on its dialog
// stack (the forms run the operation). Read-only mode refuses them.
type (
	NewReservationIntent struct{}
	CaptureIntent        struct{ ReservationKey string }
	CancelIntent         struct{ ReservationKey string }
	UpdateIntent         struct{ ReservationKey string }
	RefundIntent         struct{ TransactionKey string }
	// ReturnIntent refunds a return of a reservation by article line.
	ReturnIntent      struct{ ReservationKey string }
	GiftCardPayIntent struct{ Invoice string }
	// PayRemainderIntent pays the unpaid rest of a partial gift card
	// payment group.
	PayRemainderIntent struct {
		Group, ServiceCode, Currency, Invoice string
		Remainder                             string
	}
	ResolveIntent struct{ OpID uint64 }
)

// Push log intents.
type (
	// ResendIntent asks the embedded sandbox to send a key's pushes again.
	ResendIntent struct{ Key string }
	// SaveFixtureIntent writes a push as a fixture file.
	SaveFixtureIntent struct{ Push *store.PushRecord }
)

// ExportIntent writes the current (filtered) list of a tab to a file; Table
// is a snapshot, safe to encode from another goroutine.
type ExportIntent struct {
	Name   string // "reservations", "transactions", …
	Format string // "csv" or "json"
	Table  ExportTable
}

func (OpenReservation) intent()      {}
func (OpenTransaction) intent()      {}
func (OpenPush) intent()             {}
func (NewReservationIntent) intent() {}
func (CaptureIntent) intent()        {}
func (CancelIntent) intent()         {}
func (UpdateIntent) intent()         {}
func (RefundIntent) intent()         {}
func (ReturnIntent) intent()         {}
func (GiftCardPayIntent) intent()    {}
func (PayRemainderIntent) intent()   {}
func (ResolveIntent) intent()        {}
func (ResendIntent) intent()         {}
func (SaveFixtureIntent) intent()    {}
func (ExportIntent) intent()         {}

// Changes reports whether an intent changes the gateway or the cache (and
// is therefore refused in read-only mode).
func Changes(i Intent) bool {
	switch i.(type) {
	case NewReservationIntent, CaptureIntent, CancelIntent, UpdateIntent, RefundIntent, ReturnIntent,
		GiftCardPayIntent, PayRemainderIntent, ResolveIntent, ResendIntent, BulkIntent, RedeliverIntent:
		return true
	}
	return false
}
