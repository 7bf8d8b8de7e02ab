package store

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
