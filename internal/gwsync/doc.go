// Package gwsync learns from the gateway what paydesk was not told: it asks
// the gateway's InvoiceInfo lookup about open and recent reservations and
// transactions and books what differs exactly as the push would have been.
package gwsync
