package kv

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"
)

// ledgerView is the part of a reservation a batch's pre-flight reads: the
// ledger and what decides whether it can be captured. Decoding only these
// fields (the record also holds addresses, the original order and the
// request history) makes a 100,000-row pre-flight fit in a second.
type ledgerView struct {
	Key               string
	ReservationNumber string
	Invoice           string
	Currency          string
	CustomerName      string
	Lines             []Line
	LinesKnown        bool
	CapturedInFull    bool
	Status            Status
	Created           time.Time
	Cancelled         bool
	CapturedAmount    decimal.Decimal
	OutcomeUnknown    bool
	UnknownOps        []uint64
}

func (v *ledgerView) reservation() *Reservation {
	return &Reservation{Key: v.Key, ReservationNumber: v.ReservationNumber, Invoice: v.Invoice, Currency: v.Currency,
		CustomerName: v.CustomerName, Lines: v.Lines, LinesKnown: v.LinesKnown, CapturedInFull: v.CapturedInFull, Status: v.Status,
		Created: v.Created, Cancelled: v.Cancelled, CapturedAmount: v.CapturedAmount, OutcomeUnknown: v.OutcomeUnknown, UnknownOps: v.UnknownOps}
}

func decodeLedgerView(b []byte) (*ledgerView, error) {
	var v ledgerView
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// ledgerOnly cuts a reservation read whole (the binary record, which costs
// less to read whole than the JSON view costs to read in part) to what
// ReservationLedger promises: the ledger, no addresses, original order or
// history.
func ledgerOnly(r *Reservation) *Reservation {
	return (&ledgerView{Key: r.Key, ReservationNumber: r.ReservationNumber, Invoice: r.Invoice, Currency: r.Currency,
		CustomerName: r.CustomerName, Lines: r.Lines, LinesKnown: r.LinesKnown, CapturedInFull: r.CapturedInFull, Status: r.Status,
		Created: r.Created, Cancelled: r.Cancelled, CapturedAmount: r.CapturedAmount, OutcomeUnknown: r.OutcomeUnknown,
		UnknownOps: r.UnknownOps}).reservation()
}
