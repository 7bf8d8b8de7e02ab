package domain

import (
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// Batch kinds.
const (
	BatchCapture    = "capture"
	BatchCancelRest = "cancel-rest"
)

// BatchItemState is where one item (a reservation's row set) of a batch is.
type BatchItemState string

// Item states. Planned items have not been handed to the operations yet,
// or were handed over by a process that ended before it wrote the outcome
// (the journal then tells).
const (
	ItemPlanned        BatchItemState = "planned"
	ItemSettled        BatchItemState = "settled"
	ItemSent           BatchItemState = "sent" // accepted, waiting for the push
	ItemFailed         BatchItemState = "failed"
	ItemOutcomeUnknown BatchItemState = "outcome_unknown"
	ItemRefused        BatchItemState = "refused" // by the pre-flight or the operation's own checks; nothing sent
	// ItemResolved: its outcome was unknown and the operator resolved the
	// operation by hand (the note says what the gateway showed).
	ItemResolved BatchItemState = "resolved"
)

// Done reports whether the item needs nothing more from a batch run: it was
// sent (whatever came of it) or refused.
func (s BatchItemState) Done() bool { return s != ItemPlanned }

// Batch is one run of a manifest.
type Batch struct {
	ID       string // B1, B2, …
	Kind     string // BatchCapture or BatchCancelRest
	Hash     string // SHA-256 of the manifest's bytes, hex
	Source   string // the file name as given ("-" for stdin)
	Operator string
	Created  time.Time
	Late     bool // captures past the 14-day window were confirmed
	Rows     int  // rows of the manifest
	Items    int  // items (reservations)
	Total    decimal.Decimal
	Currency string
}

// BatchItem is one reservation's part of a batch: one capture (or one
// cancel of the rest).
type BatchItem struct {
	Index       int
	Reservation string // reservation number
	Invoice     string
	Rows        []int // manifest line numbers
	Lines       []api.CaptureLine
	Amount      decimal.Decimal
	Currency    string
	Note        string   // parcels and tracking numbers of its rows
	Parcels     []Parcel `json:",omitempty"`
	State       BatchItemState
	// Rule names the pre-flight rule that refused it, Message says why or
	// what happened.
	Rule    string `json:",omitempty"`
	Message string `json:",omitempty"`
	OpID    uint64 `json:",omitempty"`
	Key     string `json:",omitempty"`
	Updated time.Time
}
